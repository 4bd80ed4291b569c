import type { Logger, LogLevel } from '../../src/index.js';

type Level = Exclude<LogLevel, 'off'>;

/**
 * A logger that keeps the lines of the levels given (all by default), in
 * order: the one recording logger of the tests.
 */
export function recordingLogger(levels: readonly Level[] = ['error', 'warn', 'info', 'debug']) {
  const lines: string[] = [];
  const keep = (level: Level) => (line: string) => {
    if (levels.includes(level)) lines.push(line);
  };
  const logger: Logger = {
    error: keep('error'),
    warn: keep('warn'),
    info: keep('info'),
    debug: keep('debug'),
  };
  return { logger, lines };
}

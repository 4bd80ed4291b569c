import { redact } from './redact.js';

/** How much the client logs. Each level includes the ones before it. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/** Where log lines go; `console` fits. */
export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
}

const RANK: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 };

/** A leveled logger that prefixes its lines and scrubs `secret` from them. */
export class LevelLogger {
  readonly #rank: number;
  readonly #sink: Logger;
  readonly #secret: string;

  constructor(level: LogLevel, sink: Logger, secret: string) {
    this.#rank = RANK[level];
    this.#sink = sink;
    this.#secret = secret;
  }

  enabled(level: Exclude<LogLevel, 'off'>): boolean {
    return this.#rank >= RANK[level];
  }

  log(level: Exclude<LogLevel, 'off'>, message: string): void {
    if (!this.enabled(level)) return;
    const line = `[animal-store] ${message}`;
    try {
      this.#sink[level](redact(line, this.#secret));
    } catch {
      // A logger that throws must not break a call, nor what the call guarantees.
    }
  }
}

/** Checks a `logLevel` option. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && Object.hasOwn(RANK, value);
}

/** What was thrown, as text for a log line; never throws itself, whatever was thrown. */
export function describeThrown(thrown: unknown): string {
  try {
    return thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  } catch {
    return `a value of type ${typeof thrown}`;
  }
}

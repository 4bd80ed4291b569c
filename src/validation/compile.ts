import type * as z from 'zod/mini';

/** Returned by a compiled check for anything it does not accept. */
export const REJECT: unique symbol = Symbol('reject');

/** A Zod schema compiled once into plain closures: the value as Zod would output it, or {@link REJECT}. */
export type Check = (input: unknown) => unknown;

type Def = {
  type: string;
  format?: string;
  checks?: unknown[];
  element?: z.ZodMiniType;
  shape?: Record<string, z.ZodMiniType>;
  catchall?: z.ZodMiniType;
  entries?: Record<string, unknown>;
  innerType?: z.ZodMiniType;
};

const defOf = (schema: z.ZodMiniType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

function compileObject(def: Def): Check | undefined {
  if (def.catchall || !def.shape) return undefined;
  const fields: { key: string; check: Check; optional: boolean }[] = [];
  for (const [key, schema] of Object.entries(def.shape)) {
    const field = defOf(schema);
    const optional = field.type === 'optional';
    const check = compile(optional && field.innerType ? field.innerType : schema);
    if (!check) return undefined;
    fields.push({ key, check, optional });
  }
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return REJECT;
    const source = input as Record<string, unknown>;
    const output: Record<string, unknown> = {};
    for (const { key, check, optional } of fields) {
      if (!Object.hasOwn(source, key)) {
        if (optional) continue;
        return REJECT;
      }
      const value = check(source[key]);
      if (value === REJECT) return REJECT;
      output[key] = value;
    }
    return output;
  };
}

/**
 * Compiles the subset of Zod used by the response schemas (object with strip,
 * array, string, safe integer, enum, optional) into closures that run without
 * Zod's per-call machinery. `undefined` for anything else. It may reject more
 * than Zod (the caller then asks Zod, which has the last word and the issues)
 * but never accepts what Zod rejects, nor outputs anything else.
 */
export function compile(schema: z.ZodMiniType): Check | undefined {
  const def = defOf(schema);
  if (def.checks?.length) return undefined;
  switch (def.type) {
    case 'string':
      return (input) => (typeof input === 'string' ? input : REJECT);
    case 'number':
      return def.format === 'safeint'
        ? (input) => (typeof input === 'number' && Number.isSafeInteger(input) ? input : REJECT)
        : undefined;
    case 'enum': {
      const values = new Set(Object.values(def.entries ?? {}));
      return (input) => (values.has(input) ? input : REJECT);
    }
    case 'array': {
      const element = def.element && compile(def.element);
      if (!element) return undefined;
      return (input) => {
        if (!Array.isArray(input)) return REJECT;
        const output = new Array<unknown>(input.length);
        for (let i = 0; i < input.length; i++) {
          const value = element(input[i]);
          if (value === REJECT) return REJECT;
          output[i] = value;
        }
        return output;
      };
    }
    case 'object':
      return compileObject(def);
    default:
      return undefined;
  }
}

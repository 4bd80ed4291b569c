// Every spelling of the API key that a decoder reads as the key, as one pattern: what the
// client takes out of everything it shows (see `Redactor` in errors.ts). Built once per client.

const hex = (unit: number, digits: number) => unit.toString(16).padStart(digits, '0');

const literal = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** HTML's named character references of ASCII characters (letters and digits have none), each name before its character. */
const NAMED =
  'Tab\tNewLine\nexcl!quot"num#dollar$percnt%amp&apos\'lpar(rpar)ast*midast*plus+comma,period.sol/colon:semi;lt<equals=gt>quest?commat@lsqb[lbrack[bsol\\rsqb]rbrack]Hat^lowbar_UnderBar_grave`DiacriticalGrave`lcub{lbrace{verbar|vert|VerticalLine|rcub}rbrace}';

/** The part of `secret`'s base64 that is the same wherever in a run it starts, in either alphabet. */
function base64(secret: string): string[] {
  const bytes = Array.from(new TextEncoder().encode(secret), (byte) => String.fromCharCode(byte));
  return [0, 1, 2].flatMap((shift) => {
    const run = btoa('\0'.repeat(shift) + bytes.join(''));
    const part = run.slice(Math.ceil(shift / 0.75), Math.floor((shift + bytes.length) / 0.75));
    // A short key's would match where it is not (and a key under 12 characters counts only alone).
    if (part.length < 12) return [];
    // Wrapped (MIME's lines, PEM's): white space may stand between any two of its characters.
    const spaced = (text: string) => [...text].map(literal).join('\\s*');
    return [part, part.replace(/\+/g, '-').replace(/\//g, '_')].map(spaced);
  });
}

// What may stand between two of the key's characters: what a reader does not see (controls, NUL
// as UTF-16 read as bytes shows it; Unicode's format characters: zero-width, direction marks, soft
// hyphen, tags; fillers, variation selectors; combining marks), and a split: a line break, a space, or a comma (a
// header sent twice), those of them the key does not hold, so that no run is read two ways.
const between = (secret: string) =>
  `(?:[\\0-\\x08\\x0e-\\x1f\\x7f-\\x9f\\xad\\u0300-\\u036f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\t-\\r${[' ', ','].filter((split) => !secret.includes(split)).join('')}]|\\udb40[\\udc00-\\udc7f])*`;

/**
 * Any run of half the key or more (at least 12 characters), as is, in any case, taken to where it
 * stops: a server that echoes most of the key, or splits it (across two headers, around a tag or
 * a look-alike character), shows no part it could be put together from.
 */
function halves(secret: string): string[] {
  const need = Math.max(12, Math.ceil(secret.length / 2));
  const chars = secret.length > 256 ? [] : [...secret].map(literal);
  return chars
    .slice(need - 1)
    .map(
      (_, at) =>
        chars.slice(at, at + need).join('') +
        chars.slice(at + need).reduceRight((tail, char) => `(?:${char}${tail})?`, ''),
    );
}

/**
 * Every spelling of `secret` a decoder reads as it: each character as is, percent-encoded (once or
 * twice), in hex (`\x` each, or the whole bare, as a dump shows it), or as a list of bytes, escaped (`\u`, `\u{}`) or an HTML character reference (by number or
 * name), any case, unseen characters between; or the whole in base64, wrapped or not.
 */
export function spellings(secret: string): RegExp {
  // Clients made again and again with one key (one per request, say) share one, built and compiled once.
  const made = recent.get(secret) ?? build(secret);
  recent.delete(secret);
  recent.set(secret, made);
  if (recent.size > 16) recent.delete(recent.keys().next().value as string);
  return made;
}

const recent = new Map<string, RegExp>();

function build(secret: string): RegExp {
  // As JSON quotes it too, whole: a `\` read as either `\` or `\\` would make every reading of a run of them tried.
  const unseen = between(secret);
  const sources = [secret, JSON.stringify(secret).slice(1, -1)].map((text) => {
    let source = '';
    for (const char of text) {
      const code = char.codePointAt(0) ?? 0;
      const forms = [literal(char), `&#0*${code};?`, `&#x0*${code.toString(16)};?`];
      for (const [, name, named] of NAMED.matchAll(/([A-Za-z]+)([^A-Za-z])/g)) {
        if (named === char) forms.push(`&${name};?`);
      }
      const bytes = [...new TextEncoder().encode(char)].map((byte) => hex(byte, 2));
      for (const before of ['%', '%25', '\\\\x']) forms.push(before + bytes.join(before));
      forms.push([...char].map((unit) => `\\\\u${hex(unit.charCodeAt(0), 4)}`).join(''));
      forms.push(`\\\\u\\{0*${code.toString(16)}\\}`);
      if (char === '"' || char === '/') forms.push(`\\\\\\${char}`);
      source += `${source && unseen}(?:${forms.join('|')})`;
    }
    return source;
  });
  // Bare hex only whole, with any separator: a digit of the key read either as itself or as half
  // of a byte would make a run of them tried every way.
  const bytes = [...new TextEncoder().encode(secret)];
  const each = '(?:[\\s:,.-]|0x)*';
  const dumps = [bytes.map((byte) => hex(byte, 2)).join(each), bytes.join('\\s*,\\s*')];
  // (Not for a key over 256 characters, which no dump of a request shows, and whose pattern would grow too deep.)
  const all = [
    ...sources,
    ...(secret.length > 256 ? [] : dumps),
    ...base64(secret),
    ...halves(secret),
  ];
  return new RegExp([...new Set(all)].join('|'), 'gi');
}

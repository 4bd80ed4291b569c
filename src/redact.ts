// Where the API key stands in a text, however a reader would read it there. The text is read the
// ways a decoder reads it (as is, and with its escapes decoded once and twice), and each reading
// goes once through an automaton of every run of the key and of its base64, and the text as is
// through one of its bytes written out (hex or decimal): the time taken grows with the text and
// the key, never with what either holds.

/** A text as read one way: each character read (a code point) and where in the text it was read from. */
interface Reading {
  points: Int32Array;
  from: Int32Array;
  to: Int32Array;
}

/** Every run of some strings: a suffix automaton, built once per key, its moves kept flat. */
interface Runs {
  /** Where each state's moves start in `on` and `to`, sorted by the character they read. */
  first: Int32Array;
  on: Int32Array;
  to: Int32Array;
  link: Int32Array;
  length: Int32Array;
  /** The shortest run that counts. */
  need: number;
  /** How many characters at a point a reader passes over between two of the key's (0: none). */
  skip: (points: Int32Array, at: number) => number;
}

/** The parts of a text, [from, to), that hold the key. */
type Spans = [number, number][];

// What a reader passes over (a key is visible ASCII): controls (NUL, as UTF-16 read as bytes
// shows it, and line breaks), format characters (zero-width, direction marks, soft hyphen, tags),
// marks that combine with the character before, every kind of space and line separator, blanks
// and fillers, and the replacement character a byte no decoder could read becomes.
let unseenChars: RegExp | undefined;

function unseen(point: number): boolean {
  if (point >= 0x20 && point < 0x7f) return false;
  // biome-ignore lint/complexity/useRegexLiterals: V8 checks a literal as the module loads, 0.5 ms of the import (Node 20)
  unseenChars ??= new RegExp(
    '[\\p{Cc}\\p{Cf}\\p{M}\\p{Z}\\u115f\\u1160\\u2800\\u3164\\uffa0\\ufffd]',
    'u',
  );
  return unseenChars.test(String.fromCodePoint(point));
}

/**
 * HTML's named character references of ASCII characters (letters and digits have none), each
 * name before its character, and every start of a name: built on first use, not at import.
 */
let html: { named: Map<string, number>; prefixes: Set<string> } | undefined;
function htmlNames() {
  if (html) return html;
  const named = new Map(
    Array.from(
      'Tab\tNewLine\nexcl!quot"num#dollar$percnt%amp&apos\'lpar(rpar)ast*midast*plus+comma,period.sol/colon:semi;lt<equals=gt>quest?commat@lsqb[lbrack[bsol\\rsqb]rbrack]Hat^lowbar_UnderBar_grave`DiacriticalGrave`lcub{lbrace{verbar|vert|VerticalLine|rcub}rbrace}'.matchAll(
        /([A-Za-z]+)([^A-Za-z])/g,
      ),
      ([, name, char]) => [name!.toLowerCase(), char!.charCodeAt(0)],
    ),
  );
  const prefixes = new Set(
    [...named.keys()].flatMap((name) => [...name].map((_, at) => name.slice(0, at + 1))),
  );
  html = { named, prefixes };
  return html;
}

/** One character in any case and width (`Ｋ` as `k`): lower-cased and compatibility-normalised, where that is one character. */
function fold(point: number): number {
  if (point < 128) return point >= 65 && point <= 90 ? point + 32 : point;
  const lower = String.fromCodePoint(point).normalize('NFKC').toLowerCase();
  return [...lower].length === 1 ? (lower.codePointAt(0) ?? point) : point;
}

function runs(needles: string[], need: number, skip: Runs['skip']): Runs {
  const next: Map<number, number>[] = [new Map()];
  const link = [-1];
  const length = [0];
  let last = 0;
  const add = (point: number) => {
    const made = next.push(new Map()) - 1;
    link.push(0);
    length.push(length[last]! + 1);
    let state = last;
    while (state !== -1 && !next[state]!.has(point)) {
      next[state]!.set(point, made);
      state = link[state]!;
    }
    const to = state === -1 ? undefined : next[state]!.get(point);
    if (to !== undefined && length[state]! + 1 === length[to]) link[made] = to;
    else if (to !== undefined) {
      const clone = next.push(new Map(next[to])) - 1;
      link.push(link[to]!);
      length.push(length[state]! + 1);
      for (; state !== -1 && next[state]!.get(point) === to; state = link[state]!) {
        next[state]!.set(point, clone);
      }
      link[to] = link[made] = clone;
    }
    last = made;
  };
  // Each needle apart from the others: a run never reads on from one to the next.
  needles.forEach((needle, at) => {
    if (at) add(-1 - at);
    for (const char of needle) add(fold(char.codePointAt(0) ?? 0));
  });
  const first = new Int32Array(next.length + 1);
  next.forEach((moves, state) => {
    first[state + 1] = first[state]! + moves.size;
  });
  const on = new Int32Array(first[next.length]!);
  const to = new Int32Array(on.length);
  next.forEach((moves, state) => {
    [...moves]
      .sort((a, b) => a[0] - b[0])
      .forEach(([point, target], at) => {
        on[first[state]! + at] = point;
        to[first[state]! + at] = target;
      });
  });
  return {
    first,
    on,
    to,
    link: Int32Array.from(link),
    length: Int32Array.from(length),
    need,
    skip,
  };
}

/** The state `runs` moves to from `state` on reading `point`, or -1. */
function move({ first, on, to }: Runs, state: number, point: number): number {
  let low = first[state]!;
  let high = first[state + 1]!;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (on[middle]! < point) low = middle + 1;
    else high = middle;
  }
  return low < first[state + 1]! && on[low] === point ? to[low]! : -1;
}

/** Adds to `found` the parts of the text where `reading` holds a run of `runs` long enough to count. */
function find(runs: Runs, reading: Reading, found: Spans): void {
  const { link, length, need, skip } = runs;
  const { points, from, to } = reading;
  // Where each character fed to the automaton was read, so that a run's first is found at once.
  const fed = new Int32Array(points.length);
  let count = 0;
  let state = 0;
  let run = 0;
  for (let at = 0; at < points.length; at++) {
    const passed = skip(points, at);
    if (passed) {
      at += passed - 1;
      continue;
    }
    const point = fold(points[at]!);
    fed[count++] = at;
    let went = move(runs, state, point);
    while (went === -1 && state) {
      state = link[state]!;
      run = length[state]!;
      went = move(runs, state, point);
    }
    state = Math.max(went, 0);
    run = went === -1 ? 0 : run + 1;
    if (run < need) continue;
    const start = from[fed[count - run]!]!;
    const end = to[at]!;
    const last = found.at(-1);
    if (last && start < last[1] && start >= last[0]) last[1] = Math.max(last[1], end);
    else found.push([start, end]);
  }
}

function blank(size: number): Reading {
  return { points: new Int32Array(size), from: new Int32Array(size), to: new Int32Array(size) };
}

/** `text` as it is, a character a code point. */
function plain(text: string): Reading {
  const out = blank(text.length);
  let count = 0;
  for (let at = 0; at < text.length; count++) {
    const point = text.codePointAt(at) ?? 0;
    out.points[count] = point;
    out.from[count] = at;
    at += point > 0xffff ? 2 : 1;
    out.to[count] = at;
  }
  return { ...out, points: out.points.subarray(0, count) };
}

/** The value of a digit (or letter, up to radix 36) in `radix`, or -1. */
function digit(point: number | undefined, radix: number): number {
  const letter = point === undefined ? 0 : point | 32;
  const value =
    point !== undefined && point >= 48 && point <= 57
      ? point - 48
      : letter >= 97 && letter <= 122
        ? letter - 87
        : -1;
  return value < radix ? value : -1;
}

/** The number written from `at` in `radix` (at most `most` digits; past Unicode's last, 0x110000), and where it ends. */
function number(points: Int32Array, at: number, radix: number, most = Infinity): [number, number] {
  let value = 0;
  let end = at;
  for (
    let d = digit(points[end], radix);
    d >= 0 && end - at < most;
    d = digit(points[++end], radix)
  ) {
    value = Math.min(value * radix + d, 0x110000);
  }
  return [value, end];
}

/** A byte written `%XX` or `\xXX` at `at`: the byte and the characters it takes. */
function byteAt(points: Int32Array, at: number): [number, number] | undefined {
  const start =
    points[at] === 37 ? at + 1 : points[at] === 92 && points[at + 1] === 120 ? at + 2 : -1;
  const [value, end] = start < 0 ? [0, 0] : number(points, start, 16, 2);
  return end - start === 2 ? [value, end - at] : undefined;
}

/** The character whose UTF-8 bytes are written from `at` (or, when they are none, the first byte's, as Latin-1). */
function utf8(points: Int32Array, at: number, [lead, used]: [number, number]): [number, number] {
  const more = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  let point = more ? lead & (0x3f >> more) : lead;
  let end = at + used;
  for (let count = 0; count < more; count++) {
    const byte = byteAt(points, end);
    if (!byte || byte[0] >> 6 !== 2) return [lead, used];
    point = (point << 6) | (byte[0] & 0x3f);
    end += byte[1];
  }
  return point > 0x10ffff ? [lead, used] : [point, end - at];
}

/** The character JSON's `\\`, `\"` or `\/` at `at` stands for, and its length. */
function quoted(points: Int32Array, at: number): [number, number] | undefined {
  const second = points[at + 1];
  return points[at] === 92 && (second === 92 || second === 34 || second === 47)
    ? [second, 2]
    : undefined;
}

/** The character an escape at `at` stands for (percent, `\x`, `\u`, `\u{}`, JSON's, HTML's references) and its length. */
function escaped(points: Int32Array, at: number): [number, number] | undefined {
  const byte = byteAt(points, at);
  if (byte) return utf8(points, at, byte);
  const [first, second, third] = [points[at], points[at + 1], points[at + 2]];
  if (first === 92 && second === 117 && third === 123) {
    const [point, end] = number(points, at + 3, 16);
    return end > at + 3 && points[end] === 125 && point <= 0x10ffff
      ? [point, end + 1 - at]
      : undefined;
  }
  if (first === 92 && second === 117) {
    const [unit, end] = number(points, at + 2, 16, 4);
    if (end !== at + 6) return undefined;
    const [low, after] =
      points[end] === 92 && points[end + 1] === 117 ? number(points, end + 2, 16, 4) : [0, 0];
    return unit >> 10 === 0x36 && low >> 10 === 0x37 && after === end + 6
      ? [0x10000 + ((unit - 0xd800) << 10) + low - 0xdc00, 12]
      : [unit, 6];
  }
  if (first === 92) return quoted(points, at);
  if (first !== 38) return undefined;
  // HTML's `;` may be left out.
  const through = (end: number) => end - at + (points[end] === 59 ? 1 : 0);
  if (second === 35) {
    const digits = at + (third !== undefined && (third | 32) === 120 ? 3 : 2);
    const [point, end] = number(points, digits, digits === at + 3 ? 16 : 10);
    return end > digits && point <= 0x10ffff ? [point, through(end)] : undefined;
  }
  // The longest name the letters start with, read while they start one.
  let name = '';
  let longest: [number, number] | undefined;
  const { named, prefixes } = htmlNames();
  for (let end = at + 1; digit(points[end], 36) >= 10; end++) {
    name += String.fromCharCode(points[end]! | 32);
    if (!prefixes.has(name)) break;
    const char = named.get(name);
    if (char !== undefined) longest = [char, through(end + 1)];
  }
  return longest;
}

/** `reading` with its escapes decoded (`read`: every kind, or only JSON's quoting). */
function decoded({ points, from, to }: Reading, read = escaped): Reading {
  const out = blank(points.length);
  let count = 0;
  for (let at = 0; at < points.length; count++) {
    const [point, used] = read(points, at) ?? [points[at]!, 1];
    out.points[count] = point;
    out.from[count] = from[at]!;
    at += used;
    out.to[count] = to[at - 1]!;
  }
  return { ...out, points: out.points.subarray(0, count) };
}

/** The part of `secret`'s base64 that is the same wherever in a run it starts, in either alphabet. */
function base64(bytes: Uint8Array): string[] {
  return [0, 1, 2].flatMap((shift) => {
    const run = btoa('\0'.repeat(shift) + String.fromCharCode(...bytes));
    const part = run.slice(Math.ceil(shift / 0.75), Math.floor((shift + bytes.length) / 0.75));
    // A short key's would match where it is not (and a key under 12 characters counts only alone).
    return part.length < 12 ? [] : [part, part.replace(/\+/g, '-').replace(/\//g, '_')];
  });
}

/**
 * How `secret` is taken out of a text as `[redacted]` (see `finder`): texts shorter than
 * `shortest` cannot hold it; `known` holds the last 64 short texts read (and what each became);
 * `clean` reads one, and keeps the process's last long one too. Clients made again and again with
 * one key (one per request, say) share one, built once.
 */
export interface Redaction {
  readonly shortest: number;
  readonly known: Map<string, string>;
  clean(text: string): string;
}

export function redaction(secret: string): Redaction {
  const made = recent.get(secret) ?? remembering(finder(secret));
  recent.delete(secret);
  recent.set(secret, made);
  if (recent.size > 16) recent.delete(recent.keys().next().value as string);
  return made;
}

const recent = new Map<string, Redaction>();

function remembering(find: ReturnType<typeof finder>): Redaction {
  const known = new Map<string, string>();
  const clean = (text: string) => {
    const seen = long.find((one) => one.find === find && one.text === text)?.clean;
    if (seen !== undefined) return seen;
    let out = '';
    let end = 0;
    for (const [from, to] of find(text)) {
      out += `${text.slice(end, from)}[redacted]`;
      end = to;
    }
    out = end ? out + text.slice(end) : text;
    for (const one of [text, out]) {
      if (one.length > 1024) long.unshift({ find, text: one, clean: out });
      else known.set(one, out);
    }
    long.length = Math.min(long.length, 2);
    while (known.size > 128) known.delete(known.keys().next().value as string);
    return out;
  };
  return { shortest: find.shortest, known, clean };
}

const long: { find: unknown; text: string; clean: string }[] = [];

/**
 * Finds `secret` in a text: whole or any run of half of it or more (at least 12 characters; a
 * shorter key only whole), in any case, each character as is or escaped, with what a reader does
 * not see between (and a split: a space, a comma, a line break, where the key holds none); or in
 * base64 (wrapped or not); or its bytes written out in hex or decimal, with or without separators.
 */
function finder(secret: string): ((text: string) => Spans) & { shortest: number } {
  const chars = [...secret];
  const bytes = new TextEncoder().encode(secret);
  const held = new Set(chars.map((char) => char.codePointAt(0)));
  const short = chars.length < 12;
  const text = runs(
    [secret, ...base64(bytes)],
    short ? chars.length : Math.max(12, Math.ceil(chars.length / 2)),
    (points, at) => {
      const point = points[at]!;
      return (unseen(point) || point === 32 || point === 44) && !held.has(point) ? 1 : 0;
    },
  );
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  const dump = runs([hex, bytes.join('')], short ? hex.length : bytes.length, (points, at) => {
    const point = points[at]!;
    if (point === 48 && (points[at + 1]! | 32) === 120) return 2;
    // A space, `,` `-` `.` `:`, or what a reader does not see.
    const separator =
      point === 32 || (point >= 44 && point <= 46) || point === 58 || point === 0xa0;
    return separator || unseen(point) ? 1 : 0;
  });
  const spans = (input: string) => {
    const found: Spans = [];
    let reading = plain(input);
    find(dump, reading, found);
    find(text, reading, found);
    // A key quoted in JSON, whatever else its characters look like (`%41`, `&amp;`).
    if (reading.points.includes(92)) find(text, decoded(reading, quoted), found);
    // (`%`, `&`, `\`: where no escape can start, decoding reads the text as is.)
    for (
      let times = 0;
      times < 2 && [37, 38, 92].some((c) => reading.points.includes(c));
      times++
    ) {
      const read = decoded(reading);
      // Nothing decoded (every escape takes more than one character): nothing new to read.
      if (read.points.length === reading.points.length) break;
      reading = read;
      find(text, reading, found);
    }
    found.sort((a, b) => a[0] - b[0]);
    const merged: Spans = [];
    for (const span of found) {
      const last = merged.at(-1);
      if (last && span[0] < last[1]) last[1] = Math.max(last[1], span[1]);
      else if (!short || alone(input, span)) merged.push(span);
    }
    return merged;
  };
  // Each character found takes one of the text's at least.
  return Object.assign(spans, { shortest: Math.min(text.need, dump.need) });
}

// A short key counts only as a token of its own: between characters that cannot continue a word,
// a path, a header name or a base64 run (`=` before, `.` `,` after may).
const TOKEN_CHAR = /[A-Za-z0-9._~/+=-]/;

function alone(text: string, [from, to]: [number, number]): boolean {
  const before = text[from - 1];
  const after = /[.,]/.test(text[to] ?? '') ? text[to + 1] : text[to];
  return (
    !(before && before !== '=' && TOKEN_CHAR.test(before)) && !(after && TOKEN_CHAR.test(after))
  );
}

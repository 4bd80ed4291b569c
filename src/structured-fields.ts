// The List fields of RFC 9651 (Structured Field Values for HTTP), as the IETF
// `RateLimit` and `RateLimit-Policy` fields use them: checked whole by one
// pattern built from the RFC's grammar, then read member by member. A field
// that does not match fails whole, as the RFC requires: the caller ignores it.

/** A bare item: integer or decimal, string or token, byte sequence (its base64 text), boolean, date. */
export type BareItem = number | string | boolean | { readonly token: string };

/** A list member: an item, or an inner list of items, with its parameters. */
export interface Member {
  readonly value: BareItem | readonly Member[];
  readonly params: ReadonlyMap<string, BareItem>;
}

const BARE =
  '"(?:[ !#-\\[\\]-~]|\\\\["\\\\])*"' + // string
  "|[A-Za-z*][-!#$%&'*+.^_`|~\\w:/]*" + // token
  '|-?(?:\\d{1,12}\\.\\d{1,3}|\\d{1,15})' + // decimal, integer
  '|\\?[01]|:[\\w+/=]*:|@-?\\d{1,15}'; // boolean, byte sequence, date
const PARAMS = `(?:; *[a-z*][-a-z\\d_.*]*(?:=(?:${BARE}))?)*`;
const ITEM = `(?:${BARE})${PARAMS}`;
const MEMBER = `(?:${ITEM}|\\((?: *${ITEM}(?= |\\)))* *\\)${PARAMS})`;
const LIST = new RegExp(`^ *(?:${MEMBER}(?:[ \\t]*,[ \\t]*${MEMBER})*)? *$`);

function bare(text: string): BareItem {
  const first = text[0];
  if (first === '"') return text.slice(1, -1).replace(/\\(.)/g, '$1');
  if (first === '?') return text === '?1';
  if (first === ':') return text.slice(1, -1);
  if (first === '@') return Number(text.slice(1));
  return /[-\d]/.test(first ?? '') ? Number(text) : { token: text };
}

function params(text: string): Map<string, BareItem> {
  const read = new Map<string, BareItem>();
  for (const [, key = '', value] of text.matchAll(new RegExp(`; *([^=;]+)(?:=(${BARE}))?`, 'g'))) {
    read.set(key, value === undefined ? true : bare(value));
  }
  return read;
}

function item(text: string): Member {
  const [, value = ''] = new RegExp(`^(${BARE})`).exec(text) ?? [];
  return { value: bare(value), params: params(text.slice(value.length)) };
}

/**
 * The members of a List field (RFC 9651, section 4.2.1), or `undefined` when
 * the field is absent or fails to parse.
 */
export function parseList(field: string | null): Member[] | undefined {
  if (field === null || !LIST.test(field)) return undefined;
  return [...field.matchAll(new RegExp(MEMBER, 'g'))].map(([text]) => {
    if (text[0] !== '(') return item(text);
    const end = text.lastIndexOf(')');
    const inner = [...text.slice(1, end).matchAll(new RegExp(ITEM, 'g'))].map(([one]) => item(one));
    return { value: inner, params: params(text.slice(end + 1)) };
  });
}

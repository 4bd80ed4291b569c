// The examples of RFC 9651 (Structured Field Values for HTTP) for Lists and
// their items, and its failures: a field that does not parse is ignored whole.
import { describe, expect, it } from 'vitest';
import { parseList } from '../src/headers.js';

const token = (name: string) => ({ token: name });
const plain = (entries: [string, unknown][] = []) => new Map(entries);

describe('parseList', () => {
  it('reads a list of tokens (RFC 9651, 3.1)', () => {
    expect(parseList('sugar, tea, rum')).toEqual([
      { value: token('sugar'), params: plain() },
      { value: token('tea'), params: plain() },
      { value: token('rum'), params: plain() },
    ]);
  });

  it('reads inner lists, the empty one included (3.1.1)', () => {
    const list = parseList('("foo" "bar"), ("baz"), ("bat" "one"), ()');
    expect(
      list?.map((member) => (member.value as readonly { value: unknown }[]).map((i) => i.value)),
    ).toEqual([['foo', 'bar'], ['baz'], ['bat', 'one'], []]);
    expect(parseList('("foo"; a=1;b=2);lvl=5, ("bar" "baz");lvl=1')?.[0]?.params).toEqual(
      plain([['lvl', 5]]),
    );
  });

  it('reads parameters, a bare key being true (3.1.2)', () => {
    expect(parseList('abc;a=1;b=2; cde_456, (ghi;jk=4 l);q="9";r=w')).toEqual([
      {
        value: token('abc'),
        params: plain([
          ['a', 1],
          ['b', 2],
          ['cde_456', true],
        ]),
      },
      {
        value: [
          { value: token('ghi'), params: plain([['jk', 4]]) },
          { value: token('l'), params: plain() },
        ],
        params: plain([
          ['q', '9'],
          ['r', token('w')],
        ]),
      },
    ]);
    expect(parseList('1; a; b=?0')?.[0]?.params).toEqual(
      plain([
        ['a', true],
        ['b', false],
      ]),
    );
  });

  it.each([
    ['42', 42],
    ['-42', -42],
    ['4.5', 4.5],
    ['"hello world"', 'hello world'],
    ['"say \\"hi\\" \\\\ bye"', 'say "hi" \\ bye'],
    ['foo123/456', token('foo123/456')],
    ['?1', true],
    [
      ':cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:',
      'cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==',
    ],
    ['@1659578233', 1659578233],
  ])('reads the bare item %s (3.3)', (field, value) => {
    expect(parseList(field)).toEqual([{ value, params: plain() }]);
  });

  it('reads an empty field as an empty list, and an absent one as nothing', () => {
    expect(parseList('')).toEqual([]);
    expect(parseList(null)).toBeUndefined();
  });

  it.each([
    '1.5555',
    '1234567890123.0',
    '1234567890123456',
    '"unterminated',
    '"tab\there"',
    '"bad \\n escape"',
    'a,',
    'a, ,b',
    'abc;A=1',
    '?2',
    '(a b',
    '"x";r=',
    'a b',
  ])('fails %j whole', (field) => {
    expect(parseList(field)).toBeUndefined();
  });
});

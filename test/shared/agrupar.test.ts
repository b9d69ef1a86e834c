import { agrupar } from '../../lib/agrupar';

test('groups items by key, each group in the items\' order, with the item or a value of it', () => {
  const itens = [
    { k: 'b', v: 1 },
    { k: 'a', v: 2 },
    { k: 'b', v: 3 },
  ];
  expect([...agrupar(itens, (i) => i.k, (i) => i.v)]).toEqual([
    ['b', [1, 3]],
    ['a', [2]],
  ]);
  expect(agrupar(itens, (i) => i.k).get('b')).toEqual([itens[0], itens[2]]);
  expect(agrupar([], (i: string) => i).size).toBe(0);
});

/**
 * `itens` in groups by `chave`, each group's values (`valor`, the item itself by default) in the
 * items' order. (Map.groupBy does this from Node.js 21 on.)
 */
export function agrupar<T, K, V = T>(itens: Iterable<T>, chave: (item: T) => K, valor: (item: T) => V = (item) => item as unknown as V): Map<K, V[]> {
  const grupos = new Map<K, V[]>();
  for (const item of itens) {
    const k = chave(item);
    const grupo = grupos.get(k);
    if (grupo) grupo.push(valor(item));
    else grupos.set(k, [valor(item)]);
  }
  return grupos;
}

import { compactarFilaDeErro, entregasNaFilaDeErro } from '../../api/hub/contagem';
import { purgarHistorico } from '../../api/hub/entregas';
import { Entrega } from '../../models/hub';
import { hubNesteArquivo } from './apoio-entregas';

/**
 * SPEC 4.3 `entregas_na_fila_de_erro`, kept by the entrega table's triggers as base counts plus
 * deltas (migration 0015): exact at every read, whether or not the hub-contagem job has folded the
 * deltas yet, through every way a delivery enters or leaves the error queue.
 */
const falhando = new Set<string>();
const t = hubNesteArquivo({ responder: (r) => (falhando.has(r.caminho) ? 500 : 200) });

const naFila = async (assinaturaId: string) => (await t.hub.assinatura(assinaturaId)).entregas_na_fila_de_erro;
const deltasDe = async (assinaturaId: string) =>
  Number(
    ((await Entrega.sequelize!.query('SELECT COUNT(*) AS n FROM fila_de_erro_contagem_delta WHERE assinatura_id = ?', {
      replacements: [assinaturaId],
      plain: true,
    })) as { n: number }).n,
  );

async function emFalha(caminho: string, quantas: number) {
  falhando.add(caminho);
  return t.hub.cenarioNaFilaDeErro(t.receptor.url(caminho), quantas);
}

test('the count follows each delivery into and out of the error queue, before and after the deltas are folded', async () => {
  const { c, entregas } = await emFalha('/conta', 4);
  const { c: outra } = await emFalha('/conta-outra', 2);
  expect(await naFila(c.assinatura.id)).toBe(4);
  expect(await naFila(outra.assinatura.id)).toBe(2);

  // folded: the same counts, read from the base alone
  await compactarFilaDeErro();
  expect(await deltasDe(c.assinatura.id)).toBe(0);
  expect(await naFila(c.assinatura.id)).toBe(4);
  expect(Object.fromEntries(await entregasNaFilaDeErro([c.assinatura.id, outra.assinatura.id]))).toEqual({
    [c.assinatura.id]: 4,
    [outra.assinatura.id]: 2,
  });

  // a replay takes one out of the queue (delivered now), the other subscription untouched
  falhando.delete('/conta');
  const res = await t.hub.api.post(`/entrega/${entregas[0].id}/reenviar`, { token: await t.hub.admin() });
  expect(res.status).toBe(202);
  await t.hub.esperarSituacao(entregas[0].id, 'entregue');
  expect(await naFila(c.assinatura.id)).toBe(3);
  expect(await naFila(outra.assinatura.id)).toBe(2);

  // the retention purge drops one older than the period
  const antigo = new Date(Date.now() - 31 * 86_400_000);
  await Entrega.update({ criada_em: antigo, atualizada_em: antigo }, { where: { id: entregas[1].id }, silent: true });
  expect((await purgarHistorico(30)).entregas).toBeGreaterThanOrEqual(1);
  expect(await naFila(c.assinatura.id)).toBe(2);

  // a change that leaves the situation as it was logs nothing
  await compactarFilaDeErro();
  await Entrega.update({ ultimo_erro: 'outro' }, { where: { id: entregas[2].id } });
  expect(await deltasDe(c.assinatura.id)).toBe(0);

  // replaying the whole error queue empties it; folded, the base says 0
  const todas = await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() });
  expect(todas.body).toEqual({ reenviadas: 2 });
  for (const e of entregas.slice(2)) await t.hub.esperarSituacao(e.id, 'entregue');
  expect(await naFila(c.assinatura.id)).toBe(0);
  await compactarFilaDeErro();
  expect(Object.fromEntries(await entregasNaFilaDeErro([c.assinatura.id]))).toEqual({ [c.assinatura.id]: 0 });
  expect(await naFila(outra.assinatura.id)).toBe(2);
});

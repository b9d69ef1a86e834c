import { randomUUID } from 'node:crypto';
import { PAGINAS_DAS_REMOCOES } from '../../api/sales/anexos';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0022 indexes the removal lists by age: the removals read them oldest first, a page at
 * a time (api/sales/anexos.ts), and a backlog was sorted whole on every pass. Run again, it
 * changes nothing.
 */
const banco = bancoAntesDaMigracao('sales', MIGRACOES_SALES, '0022-sales-remocoes-por-idade');
const { q, indice } = banco;

afterAll(() => banco.apagar());

// the pages the removals read, as they read them
const PAGINAS = {
  arquivo_a_apagar: PAGINAS_DAS_REMOCOES.arquivo_a_apagar(500),
  chave_a_apagar: PAGINAS_DAS_REMOCOES.chave_a_apagar(500),
};

async function planos() {
  const lidos: Record<string, { key: string | null; extra: string }> = {};
  for (const [tabela, sql] of Object.entries(PAGINAS)) {
    const [plano] = await q(`EXPLAIN ${sql}`);
    lidos[tabela] = { key: plano.key, extra: String(plano.Extra ?? '') };
  }
  return lidos;
}

test('the removal lists are read oldest first by an index, not sorted whole; run again, the migration changes nothing', async () => {
  await banco.abrir();
  for (let i = 0; i < 300; i++) {
    const criado = new Date(Date.UTC(2026, 0, 1) + ((i * 7919) % 300) * 60_000).toISOString().slice(0, 23).replace('T', ' ');
    await q('INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, ?)', [randomUUID(), criado]);
    await q('INSERT INTO chave_a_apagar (chave, criado_em) VALUES (?, ?)', [`sales-anexo-${randomUUID()}`, criado]);
  }
  for (const tabela of Object.keys(PAGINAS)) await q(`ANALYZE TABLE ${tabela}`);
  for (const plano of Object.values(await planos())) expect(plano.extra).toContain('filesort');

  expect(await migrar('sales', MIGRACOES_SALES.slice(0, indice + 1))).toEqual(['0022-sales-remocoes-por-idade']);
  const porIdade = {
    arquivo_a_apagar: { key: 'arquivo_a_apagar_por_idade', extra: 'Using index' },
    chave_a_apagar: { key: 'chave_a_apagar_por_idade', extra: 'Using index' },
  };
  expect(await planos()).toEqual(porIdade);
  const [{ primeira }] = await q('SELECT MIN(criado_em) AS primeira FROM arquivo_a_apagar');
  expect((await q(PAGINAS.arquivo_a_apagar))[0].arquivo_id).toBe((await q('SELECT arquivo_id FROM arquivo_a_apagar WHERE criado_em = ?', [primeira]))[0].arquivo_id);

  await MIGRACOES_SALES[indice].up(bancoDoServico('sales').getQueryInterface());
  expect(await planos()).toEqual(porIdade);
  const [{ n }] = await q(`SELECT COUNT(*) AS n FROM information_schema.statistics
    WHERE table_schema = DATABASE() AND index_name IN ('arquivo_a_apagar_por_idade', 'chave_a_apagar_por_idade')`);
  expect(Number(n)).toBe(2);
});

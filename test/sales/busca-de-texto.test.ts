import { condicaoDoTexto, MAXIMO_PELO_INDICE, modoDaBusca, prepararBuscaDeTexto } from '../../api/sales/busca-de-texto';
import { novaConexao } from '../../lib/database';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { eventoDeMensagem, idDoSuporte, novoContato, Sales, salesDe, unico } from './apoio';

/**
 * `texto` of GET /conversa/filtro (SPEC 4.6 rule 4) through the bigram index where the server has
 * the Mroonga engine, and through the reading of the messages: the same answers either way.
 */

let suite: SuiteDeTeste;
let s: Sales;
let sistema: { id: string; token: string };
let admin: string;
let comMroonga: boolean;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'sales', 'files']);
  s = salesDe(suite);
  sistema = await s.criarSistema('suporte');
  admin = await s.admin();
  const conexao = await novaConexao('sales');
  const [motores] = await conexao.query(`SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = 'Mroonga' AND SUPPORT IN ('YES', 'DEFAULT')`);
  await conexao.end();
  comMroonga = (motores as unknown[]).length > 0;
  // CI asks for the engine (scripts/ensure-services.sh installs it): there, its absence fails the
  // run instead of leaving the index's tests to check the fallback alone
  if (!comMroonga && process.env.SUITE_TESTES_EXIGEM_MROONGA === '1') throw new Error('MariaDB has no Mroonga engine: the bigram index cannot be tested');
  // said out loud elsewhere: without the engine the index's own tests check only the fallback
  if (!comMroonga) console.warn('MariaDB has no Mroonga engine here: the bigram index tests check only the reading of the messages');
});

afterAll(async () => {
  await prepararBuscaDeTexto();
  await suite?.encerrar();
});

async function sql<T = any>(texto: string, parametros: unknown[] = []): Promise<T[]> {
  const conexao = await novaConexao('sales');
  try {
    return (await conexao.query(texto, parametros))[0] as T[];
  } finally {
    await conexao.end();
  }
}

/** A conversation with these messages, in order; answers its id and chat-platform id. */
async function conversa(...conteudos: string[]) {
  const suporteConversaId = idDoSuporte();
  const contato = novoContato();
  let id = '';
  for (const conteudo of conteudos) id = (await s.registrar(sistema, eventoDeMensagem({ conversa: suporteConversaId, contato, conteudo }))).conversa_id;
  return { id, suporteConversaId, contato };
}

async function encontradas(texto: string): Promise<string[]> {
  const res = await s.api.get('/conversa/filtro', { token: admin, query: { texto } });
  expect(res.status).toBe(200);
  return res.body.map((c: any) => c.id).sort();
}

/**
 * message_updated of the conversation's first message with `conteudo`, at that message's creation
 * time, so that the edit also rewrites the conversation's last message.
 */
async function edicaoDaPrimeira(c: Awaited<ReturnType<typeof conversa>>, conteudo: string) {
  const [m] = await sql('SELECT CAST(suporte_mensagem_id AS CHAR) AS id, criada_em FROM conversa_mensagem WHERE conversa_id = ? ORDER BY criada_em LIMIT 1', [c.id]);
  return eventoDeMensagem({
    conversa: c.suporteConversaId,
    contato: c.contato,
    evento: 'message_updated',
    mensagem: Number(m.id),
    criadaEm: new Date(m.criada_em),
    conteudo,
  });
}

const copias = async (conversaId: string) => (await sql('SELECT conteudo FROM conversa_mensagem_busca WHERE conversa_id = ?', [conversaId])).map((l) => l.conteudo).sort();

describe('the bigram index of the messages', () => {
  it('is used where the server has Mroonga, and each message has its copy', async () => {
    expect(modoDaBusca()).toBe(comMroonga ? 'indice' : 'varredura');
    if (!comMroonga) return;
    const c = await conversa('primeira', 'segunda');
    expect(await copias(c.id)).toEqual(['primeira', 'segunda']);
  });

  it('finds the same conversations as reading the messages, for every kind of substring', async () => {
    const tag = unico('Busca');
    const a = await conversa(`Olá, quero o ORÇAMENTO ${tag} do plano anual`, 'até amanhã');
    const b = await conversa(`cupom-relâmpago ${tag}: 50% _off_ com "aspas" e barra \\ invertida`);
    const c = await conversa(`${tag}Junto99 sem espaço`, 'outra linha\ncom quebra');
    const casos: [string, string[]][] = [
      [`orcamento ${tag}`, [a.id]], // case and accents folded, as the column's collation folds them
      [`${tag} DO PLANO`, [a.id]], // across words
      [tag.slice(3, 9), [a.id, b.id, c.id]], // inside a word
      [`${tag}:`, [b.id]],
      ['50% _off_', [b.id]], // LIKE's wildcards are text here
      ['"aspas"', [b.id]],
      ['barra \\ inv', [b.id]],
      [`${tag}junto9`, [c.id]],
      [`${tag}Junto99 sem espaço e mais`, []],
      [`${tag} d0`, []],
    ];
    const porModo: Record<string, string[][]> = {};
    for (const modo of ['varredura', 'indice'] as const) {
      expect(await prepararBuscaDeTexto(modo)).toBe(modo === 'indice' && comMroonga ? 'indice' : 'varredura');
      porModo[modo] = [];
      for (const [texto, esperadas] of casos) {
        const achadas = await encontradas(texto);
        expect({ texto, achadas }).toEqual({ texto, achadas: [...esperadas].sort() });
        porModo[modo].push(achadas);
      }
      // one character, and text common to other tests' conversations: compared between the two ways
      for (const texto of ['ç', 'a', 'o a', 'mensagem', '\\', '%%%', ': 5']) porModo[modo].push(await encontradas(texto));
    }
    expect(porModo.indice).toEqual(porModo.varredura);
  });

  it('follows an edited message and forgets a deleted conversation', async () => {
    const tag = unico('Edita');
    const c = await conversa(`antes ${tag}`);
    const evento = eventoDeMensagem({ conversa: c.suporteConversaId, contato: c.contato, conteudo: `mais uma ${tag}` });
    await s.registrar(sistema, evento);
    expect(await encontradas(`antes ${tag}`)).toEqual([c.id]);

    await s.registrar(sistema, { ...evento, event: 'message_updated', content: `depois ${tag}` });
    expect(await encontradas(`mais uma ${tag}`)).toEqual([]);
    expect(await encontradas(`depois ${tag}`)).toEqual([c.id]);
    if (comMroonga) expect(await copias(c.id)).toEqual([`antes ${tag}`, `depois ${tag}`]);

    expect((await s.api.del(`/conversa/${c.id}`, { token: admin })).status).toBe(204);
    expect(await encontradas(tag)).toEqual([]);
    if (comMroonga) expect(await copias(c.id)).toEqual([]);
  });

  it('a rolled-back deletion or edit leaves every stored text findable (Mroonga keeps no transactions)', async () => {
    const tag = unico('Desfeita');
    const c = await conversa(`apagada e desfeita ${tag}`);
    // the deletion fails on its last statement, after the messages (and their copies) were deleted
    await sql(`CREATE TRIGGER teste_falha_remocao BEFORE UPDATE ON conversa FOR EACH ROW
      BEGIN IF NEW.id = '${c.id}' AND NEW.deletado_em IS NOT NULL THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'falha de teste'; END IF; END`);
    try {
      expect((await s.api.del(`/conversa/${c.id}`, { token: admin })).status).toBe(500);
    } finally {
      await sql('DROP TRIGGER teste_falha_remocao');
    }
    expect((await s.mensagens(c.id)).map((m: any) => m.conteudo)).toEqual([`apagada e desfeita ${tag}`]);
    expect(await encontradas(tag)).toEqual([c.id]);
    if (comMroonga) expect(await copias(c.id)).toEqual([`apagada e desfeita ${tag}`]);

    // the edit fails after its text was copied to the index
    const d = await conversa(`texto de antes ${tag}`);
    const edicao = await edicaoDaPrimeira(d, `edição que falha ${tag}`);
    await sql(`CREATE TRIGGER teste_falha_edicao BEFORE UPDATE ON conversa FOR EACH ROW
      BEGIN IF NEW.ultima_mensagem = 'edição que falha ${tag}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'falha de teste'; END IF; END`);
    try {
      expect((await s.webhook(sistema, edicao)).status).toBe(500);
    } finally {
      await sql('DROP TRIGGER teste_falha_edicao');
    }
    expect(await encontradas(`texto de antes ${tag}`)).toEqual([d.id]);
    expect(await encontradas(`edição que falha ${tag}`)).toEqual([]);
    if (comMroonga) expect(await copias(d.id)).toEqual([`texto de antes ${tag}`]);
  });

  it('is rebuilt from the stored messages when its table is dropped', async () => {
    if (!comMroonga) return expect(modoDaBusca()).toBe('varredura');
    const tag = unico('Refeito');
    const c = await conversa(`guardada antes ${tag}`);
    await sql('DROP TABLE conversa_mensagem_busca');
    expect(await prepararBuscaDeTexto('indice')).toBe('indice');
    expect(await copias(c.id)).toEqual([`guardada antes ${tag}`]);
    expect(await encontradas(tag)).toEqual([c.id]);
    // and the triggers copy what comes next
    const d = await conversa(`depois de refeito ${tag}`);
    expect(await encontradas(tag)).toEqual([c.id, d.id].sort());
  });

  it('follows a message written, edited or deleted while it is being built', async () => {
    if (!comMroonga) return expect(modoDaBusca()).toBe('varredura');
    const tag = unico('Durante');
    const editada = await conversa(`antes da construção ${tag}`);
    const apagada = await conversa(`apagada na construção ${tag}`);
    const edicao = await edicaoDaPrimeira(editada, `editada na construção ${tag}`);
    let nova = { id: '' };
    await sql('DROP TABLE conversa_mensagem_busca');
    const modo = await prepararBuscaDeTexto('indice', {
      // after the copy of what was stored, before the last trigger
      aposCopia: async () => {
        await s.registrar(sistema, edicao);
        nova = await conversa(`escrita na construção ${tag}`);
        expect((await s.api.del(`/conversa/${apagada.id}`, { token: admin })).status).toBe(204);
      },
    });
    expect(modo).toBe('indice');
    expect(await copias(editada.id)).toEqual([`editada na construção ${tag}`]);
    expect(await copias(nova.id)).toEqual([`escrita na construção ${tag}`]);
    expect(await copias(apagada.id)).toEqual([]);
    expect(await encontradas(`editada na construção ${tag}`)).toEqual([editada.id]);
  });

  it('is removed, triggers first, when turned off, so message writes no longer touch it', async () => {
    if (!comMroonga) return expect(modoDaBusca()).toBe('varredura');
    expect(await prepararBuscaDeTexto('varredura')).toBe('varredura');
    expect(await sql("SHOW TABLES LIKE 'conversa_mensagem_busca'")).toEqual([]);
    expect(await sql("SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'conversa_mensagem_busca%'")).toEqual([]);
    const tag = unico('Desligado');
    const c = await conversa(`sem índice ${tag}`);
    expect(await encontradas(tag)).toEqual([c.id]);
    expect(await prepararBuscaDeTexto('indice')).toBe('indice');
    expect(await copias(c.id)).toEqual([`sem índice ${tag}`]);
  });

  it('a process that cannot get the build\'s lock in time reads the messages, and leaves the triggers of the process holding it', async () => {
    if (!comMroonga) return expect(modoDaBusca()).toBe('varredura');
    const outroProcesso = await novaConexao('sales');
    try {
      const [[trava]] = (await outroProcesso.query("SELECT GET_LOCK(LEFT(CONCAT('conversa_mensagem_busca_', DATABASE()), 64), 0) AS obtida")) as any;
      expect(Number(trava.obtida)).toBe(1);
      expect(await prepararBuscaDeTexto('indice', { esperaDaTravaS: 1 })).toBe('varredura');
      expect(await sql("SELECT COUNT(*) AS n FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'conversa_mensagem_busca%'")).toEqual([{ n: 3 }]);
    } finally {
      await outroProcesso.end();
    }
    expect(await prepararBuscaDeTexto('indice')).toBe('indice');
  });

  it('a failing search on the index reads the messages instead of failing the request', async () => {
    if (!comMroonga) return expect(modoDaBusca()).toBe('varredura');
    const tag = unico('Falha');
    const c = await conversa(`antes da falha ${tag}`);
    await sql('RENAME TABLE conversa_mensagem_busca TO conversa_mensagem_busca_fora');
    try {
      expect(await condicaoDoTexto(tag, [])).toMatch(/^EXISTS/);
      expect(await encontradas(tag)).toEqual([c.id]);
    } finally {
      await sql('RENAME TABLE conversa_mensagem_busca_fora TO conversa_mensagem_busca');
    }
    expect(await condicaoDoTexto(tag, [])).toMatch(/^c\.id IN/);
  });

  it("while another process rebuilds the index (its triggers dropped, its table partly copied) this one reads the messages: no conversation is missed", async () => {
    if (!comMroonga) return expect(modoDaBusca()).toBe('varredura');
    const tag = unico('Refazendo');
    const c = await conversa(`ainda nao copiada ${tag}`);
    // as a rebuild stands midway: the delete trigger not yet made, this message not yet copied
    await sql('DROP TRIGGER conversa_mensagem_busca_remocao');
    await sql('DELETE FROM conversa_mensagem_busca WHERE conversa_id = ?', [c.id]);
    expect(modoDaBusca()).toBe('indice');
    expect(await condicaoDoTexto(tag, [])).toMatch(/^EXISTS/);
    expect(await encontradas(tag)).toEqual([c.id]);
    // the build finished (here, by this process): the index is read again
    expect(await prepararBuscaDeTexto('indice')).toBe('indice');
    expect(await condicaoDoTexto(tag, [])).toMatch(/^c\.id IN/);
    expect(await encontradas(tag)).toEqual([c.id]);
  });

  it('is rebuilt when a trigger is missing, since it would fall behind the messages', async () => {
    if (!comMroonga) return expect(modoDaBusca()).toBe('varredura');
    const tag = unico('SemGatilho');
    await sql('DROP TRIGGER conversa_mensagem_busca_insercao');
    const c = await conversa(`escrita sem gatilho ${tag}`);
    expect(await copias(c.id)).toEqual([]);
    expect(await prepararBuscaDeTexto('indice')).toBe('indice');
    expect(await encontradas(tag)).toEqual([c.id]);
    const d = await conversa(`com gatilho de novo ${tag}`);
    expect(await encontradas(tag)).toEqual([c.id, d.id].sort());
  });

  it(`reads the messages instead when the text is in more than ${MAXIMO_PELO_INDICE} of them, or shorter than 3 characters`, async () => {
    if (!comMroonga) return expect(modoDaBusca()).toBe('varredura');
    await prepararBuscaDeTexto('indice');
    const tag = unico('Comum');
    const c = await conversa(`a primeira ${tag}`);
    const agora = new Date().toISOString().slice(0, 23).replace('T', ' ');
    const linhas = Array.from({ length: MAXIMO_PELO_INDICE }, (_, i) => [c.id, 1_000_000 + i, `m${i}`, 'contato', `${tag} ${i}`, agora, agora, agora]);
    for (let i = 0; i < linhas.length; i += 5000) {
      await sql('INSERT INTO conversa_mensagem (conversa_id, suporte_mensagem_id, id, autor, conteudo, criada_em, criado_em, atualizado_em) VALUES ?', [
        linhas.slice(i, i + 5000),
      ]);
    }
    const parametros: unknown[] = [];
    expect(await condicaoDoTexto(tag, parametros)).toMatch(/^EXISTS/);
    expect(await encontradas(tag)).toEqual([c.id]);
    // a rare text of the same conversation still goes by the index, and so does one found nowhere
    expect(await condicaoDoTexto(`primeira ${tag}`, [])).toMatch(/^c\.id IN/);
    expect(await encontradas(`primeira ${tag}`)).toEqual([c.id]);
    expect(await condicaoDoTexto(`${tag} nenhuma`, [])).toBe('FALSE');
    // one or two characters are common by nature: read
    expect(await condicaoDoTexto('çã', [])).toMatch(/^EXISTS/);
  });
});

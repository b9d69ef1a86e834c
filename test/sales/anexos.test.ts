import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import nock from 'nock';
import { Op, QueryTypes } from 'sequelize';
import { apagarCopiasPendentes, copiarAnexo, enfileirarRemocao, varrerAnexos } from '../../api/sales/anexos';
import { config, loadConfig } from '../../config';
import { banco, novaConexao } from '../../lib/database';
import { Arquivo } from '../../models/files';
import { Aplicativo as AplicativoDoIdentity } from '../../models/identity';
import { AnexoDaMensagem } from '../../models/sales';
import { fila } from '../../queues/fila';
import { filaSalesAnexo, TENTATIVAS_DE_COPIA } from '../../queues/sales-anexo';
import { dormir, esperarAte, esperarOutraConexao } from '../helpers/espera';
import { adiantarRelogio, comRelogioAdiantado } from '../helpers/relogio';
import { anexosNesteArquivo, CHAT, comRespostaDoEnvioPerdida, ESPERA_ENTRE_TENTATIVAS_MS, eventoDeMensagem, idDoSuporte, recusarRegistroDaCopia } from './apoio';

const t = anexosNesteArquivo();

/** A message with one attachment at `caminho` of the chat platform (or another address); answers its conversation id. */
async function mensagemComAnexo(endereco: string, tipo = 'image', extension?: string) {
  const r = await t.s.registrar(
    t.sistema,
    eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue o anexo', anexos: [{ id: idDoSuporte(), data_url: endereco, file_type: tipo, ...(extension ? { extension } : {}) }] }),
  );
  return r.conversa_id as string;
}

/**
 * The attachment's copy job out of the queue, once no worker runs it (a job being run cannot be
 * removed, and would try again).
 */
const tirarDaFila = (anexoId: string) =>
  esperarAte(async () => {
    const job = await fila(filaSalesAnexo).getJob(anexoId);
    if (!job) return true;
    if ((await job.getState()) !== 'active') await job.remove().catch(() => undefined);
    return !(await fila(filaSalesAnexo).getJob(anexoId));
  }, 'the copy job out of the queue');

/** Copies recorded for removal from file storage, not yet removed. */
async function pendentes(): Promise<string[]> {
  const linhas = await banco('sales').query<{ arquivo_id: string }>('SELECT arquivo_id FROM arquivo_a_apagar', { type: QueryTypes.SELECT });
  return linhas.map((l) => l.arquivo_id);
}

async function anexoDe(conversaId: string) {
  const [m] = await t.s.mensagens(conversaId);
  return m.anexos[0];
}

/** Waits for the copy of the conversation's first attachment; answers the attachment. */
const aguardarCopia = (conversaId: string, descricao = 'the copy') =>
  esperarAte(async () => {
    const a = await anexoDe(conversaId);
    return a.arquivo_id && a;
  }, descricao);

describe('SPEC 4.6 rule 7, §6.9: the attachment is copied to file storage right after the webhook', () => {
  it('fills arquivo_id, tipo_mime and tamanho; the signed url serves the same bytes, without a token', async () => {
    const bytes = randomBytes(48_213);
    const chat = nock(CHAT).get('/rails/active_storage/blobs/redirect/abc/foto.jpg').matchHeader('api_access_token', 'token-da-api-do-chat').reply(200, bytes, {
      'content-type': 'image/jpeg',
    });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/blobs/redirect/abc/foto.jpg`);
    const anexo = await aguardarCopia(conversaId);
    expect(chat.isDone()).toBe(true);
    expect(anexo).toEqual({
      endereco: `${CHAT}/rails/active_storage/blobs/redirect/abc/foto.jpg`,
      nome: 'foto.jpg',
      tipo: 'image',
      arquivo_id: expect.any(String),
      tipo_mime: 'image/jpeg',
      tamanho: bytes.length,
      url: expect.stringContaining(`${t.suite.url.files}/arquivo/${anexo.arquivo_id}/conteudo?`),
      tentativas: 1,
    });
    const download = await fetch(anexo.url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("an e-mail's attachments that come in an edit of the stored message (Chatwoot adds them in a second save) are stored and copied; the edit repeated adds none", async () => {
    const bytes = randomBytes(321);
    nock(CHAT).get('/rails/active_storage/email/nota.pdf').reply(200, bytes, { 'content-type': 'application/pdf' });
    const criada = eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue a nota' });
    const { conversa_id } = await t.s.registrar(t.sistema, criada);
    expect((await t.s.mensagens(conversa_id))[0]).toMatchObject({ quantidade_anexos: 0, anexos: [] });
    const editada = { ...criada, event: 'message_updated', attachments: [{ id: idDoSuporte(), data_url: `${CHAT}/rails/active_storage/email/nota.pdf`, file_type: 'file' }] };
    expect(await t.s.registrar(t.sistema, editada)).toMatchObject({ conversa_id, mensagens_novas: 0 });
    const copiado = await aguardarCopia(conversa_id);
    expect(copiado).toMatchObject({ nome: 'nota.pdf', tipo_mime: 'application/pdf', tamanho: bytes.length });
    await t.s.registrar(t.sistema, editada);
    const [m] = await t.s.mensagens(conversa_id);
    expect(m).toMatchObject({ conteudo: 'segue a nota', quantidade_anexos: 1, anexos: [expect.objectContaining({ arquivo_id: copiado.arquivo_id })] });
  });

  it("an edit's attachments go up to 20 in all with those the message holds, and none to a message deleted in the platform", async () => {
    const anexo = (n: number) => ({ id: idDoSuporte(), data_url: `${CHAT}/rails/active_storage/limite/${n}.jpg`, file_type: 'image' });
    const copias = nock(CHAT).get(/\/rails\/active_storage\/limite\//).times(20).reply(200, Buffer.from('jpg'), { 'content-type': 'image/jpeg' });
    const criada = eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'muitos anexos', anexos: Array.from({ length: 15 }, (_, i) => anexo(i)) });
    const { conversa_id } = await t.s.registrar(t.sistema, criada);
    // 20 others (the most a message's event is read with): 5 of them fit
    await t.s.registrar(t.sistema, { ...criada, event: 'message_updated', attachments: Array.from({ length: 20 }, (_, i) => anexo(100 + i)) });
    const [m] = await t.s.mensagens(conversa_id);
    expect(m.quantidade_anexos).toBe(20);
    expect(m.anexos).toHaveLength(20);
    await esperarAte(async () => copias.isDone(), 'the 20 copies');

    const apagada = eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'apagada' });
    const r = await t.s.registrar(t.sistema, apagada);
    await t.s.registrar(t.sistema, { ...apagada, event: 'message_updated', content: 'This message was deleted', content_attributes: { deleted: true }, attachments: [] });
    await t.s.registrar(t.sistema, { ...apagada, event: 'message_updated', attachments: [anexo(200)] });
    expect((await t.s.mensagens(r.conversa_id))[0]).toMatchObject({ conteudo: 'This message was deleted', quantidade_anexos: 0, anexos: [] });
    expect(await AnexoDaMensagem.count({ where: { conversa_id: r.conversa_id } })).toBe(0);
  });

  it('a conversation with more attachments than file storage answers in one call (100) lists every one with its own signed url', async () => {
    const copias = nock(CHAT).get(/\/rails\/active_storage\/muitos\//).times(120).reply(200, (uri) => Buffer.from(uri), { 'content-type': 'image/jpeg' });
    const conversa = idDoSuporte();
    let conversaId = '';
    for (let m = 0; m < 6; m++) {
      const anexos = Array.from({ length: 20 }, (_, i) => ({ id: idDoSuporte(), data_url: `${CHAT}/rails/active_storage/muitos/${m}-${i}.jpg`, file_type: 'image' }));
      conversaId = (await t.s.registrar(t.sistema, eventoDeMensagem({ conversa, conteudo: `lote ${m}`, anexos }))).conversa_id;
    }
    await esperarAte(async () => (await AnexoDaMensagem.count({ where: { conversa_id: conversaId, arquivo_id: { [Op.ne]: null } } })) === 120, 'the 120 copies', 60_000);
    expect(copias.isDone()).toBe(true);
    const anexos = (await t.s.mensagens(conversaId)).flatMap((m: any) => m.anexos);
    expect(anexos).toHaveLength(120);
    expect(anexos.every((a: any) => typeof a.url === 'string' && a.url.includes(`/arquivo/${a.arquivo_id}/conteudo?`))).toBe(true);
    // the last of them, past the first call's 100, serves its own bytes
    const ultimo = anexos[anexos.length - 1];
    const download = await fetch(ultimo.url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(new URL(ultimo.endereco).pathname);
  }, 90_000);

  it('an attachment with no file (a contact card, a location, a shared page: no address, or one outside the platform) is left out; the message and its other attachments are stored', async () => {
    nock(CHAT).get('/rails/active_storage/cartao.jpg').reply(200, Buffer.from('jpg'), { 'content-type': 'image/jpeg' });
    // no request may reach these (nock refuses any address it was not given)
    const anexos = [
      { id: idDoSuporte(), file_type: 'contact', fallback_title: '+55 11 99999-0000' },
      { id: idDoSuporte(), file_type: 'location', coordinates_lat: -23.5, coordinates_long: -46.6, fallback_title: 'Aqui', data_url: null },
      { id: idDoSuporte(), file_type: 'location', coordinates_lat: -23.5, coordinates_long: -46.6, fallback_title: 'Loja', data_url: 'https://mapas.exemplo.test/loja' },
      { id: idDoSuporte(), file_type: 'fallback', fallback_title: 'Veja isto', data_url: 'https://rede.exemplo.test/post/1' },
      { id: idDoSuporte(), file_type: 'image', data_url: `${CHAT}/rails/active_storage/cartao.jpg` },
    ];
    const r = await t.s.registrar(t.sistema, eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'meu contato', anexos }));
    expect(r.mensagens_novas).toBe(1);
    const [m] = await t.s.mensagens(r.conversa_id);
    expect(m).toMatchObject({ conteudo: 'meu contato', quantidade_anexos: 1, anexos: [expect.objectContaining({ endereco: `${CHAT}/rails/active_storage/cartao.jpg`, tipo: 'image' })] });
    await esperarAte(async () => (await anexoDe(r.conversa_id)).arquivo_id, 'the copy');
  });

  it('an address the URL parser reads but RFC 3986 does not (non-ASCII, |, brackets) is kept and copied; one that is no http(s) address loses its attachment, never the message', async () => {
    nock(CHAT).get('/rails/active_storage/a%C3%A7%C3%A3o.jpg').reply(200, Buffer.from('acao'), { 'content-type': 'image/jpeg' });
    nock(CHAT).get('/rails/active_storage/file[1].pdf').query({ q: 'a|b' }).reply(200, Buffer.from('pdf'), { 'content-type': 'application/pdf' });
    const anexos = [
      { id: idDoSuporte(), file_type: 'image', data_url: `${CHAT}/rails/active_storage/ação.jpg` },
      { id: idDoSuporte(), file_type: 'file', data_url: `${CHAT}/rails/active_storage/file[1].pdf?q=a|b` },
      { id: idDoSuporte(), file_type: 'file', data_url: 'ftp://chat.exemplo.test/x.pdf' },
      { id: idDoSuporte(), file_type: 'file', data_url: 'não é um endereço' },
      { id: idDoSuporte(), file_type: 'file', data_url: `${CHAT}/${'a'.repeat(2000)}` },
    ];
    const r = await t.s.registrar(t.sistema, eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'dois anexos bons', anexos }));
    expect(r.mensagens_novas).toBe(1);
    const copiados = await esperarAte(async () => {
      const [m] = await t.s.mensagens(r.conversa_id);
      return m.anexos.every((a: { arquivo_id: string | null }) => a.arquivo_id) && m;
    }, 'both copies');
    expect(copiados).toMatchObject({ conteudo: 'dois anexos bons', quantidade_anexos: 2 });
    expect(copiados.anexos.map((a: { endereco: string; nome: string }) => [a.endereco, a.nome])).toEqual([
      [`${CHAT}/rails/active_storage/ação.jpg`, 'ação.jpg'],
      [`${CHAT}/rails/active_storage/file[1].pdf?q=a|b`, 'file[1].pdf'],
    ]);
  });

  it('any address gives a name file storage accepts: control characters, a blank segment and a long name cut inside a character', async () => {
    const longo = encodeURIComponent(`${'😀'.repeat(140)}.png`);
    const casos = [
      { caminho: '/rails/active_storage/blobs/a/nota%0Afiscal%09maio.pdf', nome: 'nota fiscal maio.pdf' },
      { caminho: '/rails/active_storage/blobs/b/%20%20', nome: expect.stringMatching(/^anexo-\d+$/) },
      // the name made of the id and the payload's extension is cleaned alike: a line break, a lone surrogate
      { caminho: '/rails/active_storage/blobs/d/%20', extensao: 'p\ndf\ud800', nome: expect.stringMatching(/^anexo-\d+\.p df\ufffd$/) },
      // 284 UTF-16 units: cut at 254, not through the 128th emoji
      { caminho: `/rails/active_storage/blobs/c/${longo}`, nome: '😀'.repeat(127) },
    ];
    for (const caso of casos) {
      nock(CHAT).get(caso.caminho).reply(200, randomBytes(64), { 'content-type': 'application/octet-stream' });
      const conversaId = await mensagemComAnexo(`${CHAT}${caso.caminho}`, 'file', caso.extensao);
      const anexo = await esperarAte(async () => {
        const a = await anexoDe(conversaId);
        return (a.arquivo_id || a.tentativas > 1) && a;
      }, `the copy of ${caso.caminho}`);
      expect({ caminho: caso.caminho, nome: anexo.nome, copiado: Boolean(anexo.arquivo_id), tentativas: anexo.tentativas }).toEqual({
        caminho: caso.caminho,
        nome: caso.nome,
        copiado: true,
        tentativas: 1,
      });
      expect((await Arquivo.findByPk(anexo.arquivo_id))!.nome).toBe(anexo.nome);
    }
  });

  it("a Content-Type file storage would refuse is sent as its essence, or as application/octet-stream: copied at the first attempt", async () => {
    const longo = `text/plain; nome=${'a'.repeat(260)}`;
    const casos = [
      // a stray semicolon, a parameter without a value, a value with accents, a quoted value with a backslash
      { enviado: 'image/jpeg;', guardado: 'image/jpeg' },
      { enviado: 'IMAGE/PNG; charset', guardado: 'image/png' },
      { enviado: 'application/pdf; name=relatório.pdf', guardado: 'application/pdf' },
      { enviado: 'text/plain; name="a\\"b"', guardado: 'text/plain' },
      { enviado: longo, guardado: 'text/plain' },
      // no type at all
      { enviado: 'jpeg', guardado: 'application/octet-stream' },
      { enviado: 'image/jp eg;', guardado: 'application/octet-stream' },
      // one that parses goes whole, file storage lowering the type and subtype
      { enviado: 'Text/Plain; charset=ISO-8859-1', guardado: 'text/plain; charset=ISO-8859-1' },
    ];
    const copias = [];
    for (const [i, caso] of casos.entries()) {
      const caminho = `/rails/active_storage/tipos/${i}.bin`;
      nock(CHAT).get(caminho).reply(200, randomBytes(32), { 'content-type': caso.enviado });
      copias.push({ enviado: caso.enviado, conversaId: await mensagemComAnexo(`${CHAT}${caminho}`, 'file') });
    }
    const vistos = [];
    for (const { enviado, conversaId } of copias) {
      const anexo = await esperarAte(async () => {
        const a = await anexoDe(conversaId);
        return (a.arquivo_id || a.tentativas > 1) && a;
      }, `the copy of ${enviado}`);
      vistos.push({ enviado, tipo_mime: anexo.tipo_mime, tentativas: anexo.tentativas });
    }
    expect(vistos).toEqual(casos.map((c) => ({ enviado: c.enviado, tipo_mime: c.guardado, tentativas: 1 })));
  });

  it('each listing answers a fresh url; the copy is a private file of the sales application', async () => {
    nock(CHAT).get('/rails/active_storage/doc.pdf').reply(200, Buffer.from('%PDF-1.4'), { 'content-type': 'application/pdf' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/doc.pdf`, 'file');
    const primeira = await aguardarCopia(conversaId);
    await dormir(1100);
    const segunda = await anexoDe(conversaId);
    const expira = (url: string) => Number(new URL(url).searchParams.get('expira'));
    expect(expira(segunda.url)).toBeGreaterThan(expira(primeira.url));
    expect(expira(segunda.url) - Date.now() / 1000).toBeGreaterThan(14 * 60);
    expect(expira(segunda.url) - Date.now() / 1000).toBeLessThanOrEqual(15 * 60);
    const arquivo_id = primeira.arquivo_id;
    const arquivo = await Arquivo.findByPk(arquivo_id);
    // a private file of the sales application, which another application does not see
    const vendas = await AplicativoDoIdentity.findOne({ where: { servico_da_suite: 'sales' } });
    expect(arquivo!.aplicativo_id).toBe(vendas!.id);
    const outro = await t.s.identity.criarAplicativo();
    const alheio = await fetch(`${t.suite.url.files}/arquivo/${arquivo_id}`, { headers: { authorization: `Bearer ${outro.token}` } });
    expect(alheio.status).toBe(404);
  });

  it('the chat platform\'s API token goes to its own address only, never to a storage elsewhere', async () => {
    const s3 = nock('https://armazenamento.exemplo.test', { badheaders: ['api_access_token'] })
      .get('/bucket/audio.ogg')
      .reply(200, Buffer.from('OggS'), { 'content-type': 'audio/ogg' });
    const conversaId = await mensagemComAnexo('https://armazenamento.exemplo.test/bucket/audio.ogg', 'audio');
    await esperarAte(async () => (await anexoDe(conversaId)).arquivo_id, 'the copy');
    expect(s3.isDone()).toBe(true);
  });
});

describe('progress of the attachment jobs (the dashboard shows it)', () => {
  it('a copy reports the bytes passed to file storage as they go, of the length the download announced; the job keeps the last', async () => {
    const pedacos = Array.from({ length: 6 }, () => randomBytes(32_768));
    const total = pedacos.reduce((n, p) => n + p.length, 0);
    // a slow download: one piece every 400 ms, so the copy lasts over two seconds
    const lento = () => Readable.from((async function* () {
      for (const p of pedacos) {
        await dormir(400);
        yield p;
      }
    })());
    nock(CHAT).get('/rails/active_storage/lento.bin').reply(200, lento, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/lento.bin`, 'file');
    const anexo = (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!;
    const vistos: { bytes: number; total: number }[] = [];
    await esperarAte(async () => {
      const progresso = (await fila(filaSalesAnexo).getJob(anexo.id))?.progress as { bytes: number; total: number } | undefined;
      if (progresso?.bytes !== undefined && progresso.bytes !== vistos.at(-1)?.bytes) vistos.push(progresso);
      return progresso?.bytes === total;
    }, 'the progress of the whole copy');
    expect(vistos.at(-1)).toEqual({ bytes: total, total, progress: 100 });
    // at least one report while the copy was under way, and bytes never going back
    expect(vistos.some((p) => p.bytes > 0 && p.bytes < total)).toBe(true);
    expect(vistos.map((p) => p.bytes)).toEqual([...vistos.map((p) => p.bytes)].sort((a, b) => a - b));
    expect((await aguardarCopia(conversaId)).tamanho).toBe(total);
  });

  it('a download that announces no length reports total null; removing copies reports each one removed', async () => {
    nock(CHAT).get('/rails/active_storage/sem-tamanho.txt').times(2).reply(200, () => Readable.from([Buffer.from('sem '), Buffer.from('tamanho')]), {
      'content-type': 'text/plain',
    });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/sem-tamanho.txt`, 'file');
    const anexo = await aguardarCopia(conversaId);
    const guardado = (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!;
    await AnexoDaMensagem.update({ arquivo_id: null }, { where: { id: guardado.id } });
    const progresso: object[] = [];
    expect(await copiarAnexo(guardado.id, (p) => progresso.push(p))).toEqual({ estado: 'copiado' });
    expect(progresso).toEqual([{ bytes: 11, total: null }]);
    // the same bytes under the attachment's Idempotency-Key: file storage answered the first copy again
    const copia = (await AnexoDaMensagem.findByPk(guardado.id))!.arquivo_id!;
    expect(copia).toBe(anexo.arquivo_id);
    // no longer referred to (as after its message's deletion), the copy leaves file storage, reported
    await AnexoDaMensagem.update({ arquivo_id: null, tentativas: TENTATIVAS_DE_COPIA }, { where: { id: guardado.id } });
    await banco('sales').query('INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, NOW(3))', { replacements: [copia] });
    // asked to stop first (a worker shutting down): nothing removed, the copy still owed
    expect(await apagarCopiasPendentes(undefined, AbortSignal.abort())).toBe(0);
    expect(await Arquivo.findByPk(copia)).not.toBeNull();
    const remocoes: object[] = [];
    const apagados = await apagarCopiasPendentes((p) => remocoes.push(p));
    expect(apagados).toBeGreaterThanOrEqual(1);
    expect(remocoes).toHaveLength(apagados);
    expect(remocoes.at(-1)).toEqual({ apagados, de: apagados });
    expect(await Arquivo.findByPk(copia)).toBeNull();
  });
});

describe('the download of an attachment', () => {
  it('follows the chat platform\'s redirect to its storage, without taking the API token along', async () => {
    const chat = nock(CHAT)
      .get('/rails/active_storage/blobs/redirect/xyz/contrato.pdf')
      .matchHeader('api_access_token', 'token-da-api-do-chat')
      .reply(302, '', { location: 'https://armazenamento.exemplo.test/bucket/xyz?assinatura=1' });
    const armazenamento = nock('https://armazenamento.exemplo.test', { badheaders: ['api_access_token'] })
      .get('/bucket/xyz')
      .query({ assinatura: '1' })
      .reply(200, Buffer.from('%PDF'), { 'content-type': 'application/pdf' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/blobs/redirect/xyz/contrato.pdf`, 'file');
    const anexo = await aguardarCopia(conversaId, 'the copy through the redirect');
    expect(chat.isDone() && armazenamento.isDone()).toBe(true);
    expect(anexo).toMatchObject({ nome: 'contrato.pdf', tipo_mime: 'application/pdf', tamanho: 4, tentativas: 1 });
  });

  it('on the chat platform\'s origin only its attachment paths are fetched: an API address is refused, token or not', async () => {
    const api = nock(CHAT).get('/api/v1/profile').reply(200, { access_token: 'do-agente' }, { 'content-type': 'application/json' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/../../api/v1/profile`, 'file');
    await esperarAte(async () => (await anexoDe(conversaId)).tentativas >= 1, 'the refused attempt');
    await dormir(100);
    expect(api.isDone()).toBe(false);
    expect(await anexoDe(conversaId)).toMatchObject({ arquivo_id: null });
    expect((await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!.ultimo_erro).toContain('/rails/active_storage/');
  });

  it('an attachment path with an encoded slash, backslash or dot is refused (a proxy could decode it into the API)', async () => {
    const api = nock(CHAT).get(/.*/).reply(200, { access_token: 'do-agente' }, { 'content-type': 'application/json' });
    for (const caminho of ['..%2F..%2Fapi/v1/profile', '..%5C..%5Capi/v1/profile', '%2e%2e/%2E%2E/api/v1/profile']) {
      const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/${caminho}`, 'file');
      const erro = await esperarAte(async () => (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!.ultimo_erro, `the refusal of ${caminho}`);
      expect(erro).toContain('/rails/active_storage/');
    }
    expect(api.isDone()).toBe(false);
  });

  it('a chat platform served under a path has its attachments under that path', async () => {
    const BASE = 'https://plataforma.exemplo.test';
    const sob = await t.s.criarSistema('suporte', { url: `${BASE}/chat`, conta_id: 1, token_api: 'token-sob-caminho' });
    const chat = nock(BASE)
      .get('/chat/rails/active_storage/blobs/redirect/p1/nota.txt')
      .matchHeader('api_access_token', 'token-sob-caminho')
      .reply(200, 'nota', { 'content-type': 'text/plain' });
    const r = await t.s.registrar(sob, eventoDeMensagem({ conversa: idDoSuporte(), anexos: [{ id: 1, data_url: `${BASE}/chat/rails/active_storage/blobs/redirect/p1/nota.txt`, file_type: 'file' }] }));
    expect(await aguardarCopia(r.conversa_id, 'the copy under the path')).toMatchObject({ tamanho: 4 });
    expect(chat.isDone()).toBe(true);
  });

  it('a redirect from its attachment path to its API is refused too', async () => {
    const chat = nock(CHAT)
      .get('/rails/active_storage/blobs/redirect/r1/a.txt')
      .reply(302, '', { location: '/api/v1/accounts/1/conversations' })
      .get('/api/v1/accounts/1/conversations')
      .reply(200, '{}');
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/blobs/redirect/r1/a.txt`, 'file');
    const erro = await esperarAte(async () => (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!.ultimo_erro, 'the refusal');
    expect(erro).toContain('/rails/active_storage/');
    expect(chat.pendingMocks()).toEqual([`GET ${CHAT}:443/api/v1/accounts/1/conversations`]);
    expect(await anexoDe(conversaId)).toMatchObject({ arquivo_id: null });
  });

  it('asks for the bytes as they are; an answer in a content coding (gzip) fails the copy instead of storing compressed bytes', async () => {
    nock(CHAT)
      .get('/rails/active_storage/blobs/redirect/gz/planilha.csv')
      .matchHeader('accept-encoding', 'identity')
      .times(2)
      .reply(200, gzipSync('a;b\n1;2\n'), { 'content-type': 'text/csv', 'content-encoding': 'gzip' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/blobs/redirect/gz/planilha.csv`, 'file');
    const erro = await esperarAte(async () => (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!.ultimo_erro, 'the refusal');
    expect(erro).toContain('content coding gzip');
    expect(await anexoDe(conversaId)).toMatchObject({ arquivo_id: null });
  });

  it('a redirect to an address no URL can be made of fails the copy (the error kept), not the worker', async () => {
    nock(CHAT).get('/rails/active_storage/blobs/redirect/r2/b.txt').times(2).reply(302, '', { location: 'http://a b' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/blobs/redirect/r2/b.txt`, 'file');
    const erro = await esperarAte(async () => (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!.ultimo_erro, 'the failure');
    expect(erro).toContain('invalid address');
    expect(await anexoDe(conversaId)).toMatchObject({ arquivo_id: null });
  });

  it('once the redirects have left the chat platform, coming back to it does not bring the API token back', async () => {
    const chat = nock(CHAT)
      .get('/rails/active_storage/blobs/redirect/ida/foto.png')
      .matchHeader('api_access_token', 'token-da-api-do-chat')
      .reply(302, '', { location: 'https://armazenamento.exemplo.test/volta' });
    const fora = nock('https://armazenamento.exemplo.test').get('/volta').reply(302, '', { location: `${CHAT}/rails/active_storage/blobs/proxy/ida/foto.png` });
    const volta = nock(CHAT, { badheaders: ['api_access_token'] })
      .get('/rails/active_storage/blobs/proxy/ida/foto.png')
      .reply(200, Buffer.from('PNG!'), { 'content-type': 'image/png' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/blobs/redirect/ida/foto.png`);
    await aguardarCopia(conversaId, 'the copy through the round trip');
    expect(chat.isDone() && fora.isDone() && volta.isDone()).toBe(true);
  });

  it('outside LOCALHOST an address on a private network is refused, unless it is the chat platform\'s own', async () => {
    const servidor = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('interno'));
    await new Promise<void>((r) => servidor.listen(0, '127.0.0.1', r));
    const origem = `http://127.0.0.1:${(servidor.address() as AddressInfo).port}`;
    config().sales.permitirDownloadsPrivados = false;
    try {
      const alheio = await mensagemComAnexo(`${origem}/segredo.txt`, 'file');
      await esperarAte(async () => (await anexoDe(alheio)).tentativas >= 1, 'the refused attempt');
      await dormir(100);
      expect(await anexoDe(alheio)).toMatchObject({ arquivo_id: null });
      expect((await AnexoDaMensagem.findOne({ where: { conversa_id: alheio } }))!.ultimo_erro).toContain('private');

      const proprio = await t.s.criarSistema('suporte', { url: origem, conta_id: 1 });
      const r = await t.s.registrar(
        proprio,
        eventoDeMensagem({ conversa: idDoSuporte(), anexos: [{ id: 1, data_url: `${origem}/rails/active_storage/blobs/anexo.txt`, file_type: 'file' }] }),
      );
      const copiado = await aguardarCopia(r.conversa_id, 'the copy from the chat platform itself');
      expect(copiado).toMatchObject({ tipo_mime: 'text/plain', tamanho: 7 });
    } finally {
      config().sales.permitirDownloadsPrivados = true;
      servidor.close();
    }
  });
});

describe('SPEC 4.6 rule 7: a failed copy is retried, up to 5 more times', () => {
  it('an upload file storage kept but whose answer was lost is not stored twice: the next attempt gets that copy (Idempotency-Key)', async () => {
    // file storage reached through a relay that loses the answer to the first upload
    await comRespostaDoEnvioPerdida(t.suite.url.files, async (envios) => {
      const bytes = randomBytes(20_000);
      nock(CHAT).get('/rails/active_storage/resposta-perdida/nota.pdf').times(2).reply(200, bytes, { 'content-type': 'application/pdf' });
      const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/resposta-perdida/nota.pdf`, 'file');
      const anexo = await aguardarCopia(conversaId, 'the copy of the second attempt');
      expect(envios()).toBeGreaterThanOrEqual(2);
      expect(anexo.tentativas).toBe(2);
      const guardados = await Arquivo.findAll({ where: { sha256: createHash('sha256').update(bytes).digest('hex') } });
      expect(guardados.map((a) => a.id)).toEqual([anexo.arquivo_id]);
    });
  });

  it('a copy that file storage kept but the database failed to record is removed from file storage; the retry records its own', async () => {
    const voltarARegistrar = await recusarRegistroDaCopia(banco('sales'), '/orfao/');
    try {
      nock(CHAT).get('/rails/active_storage/orfao/recibo.pdf').times(3).reply(200, Buffer.from('%PDF-orfao'), { 'content-type': 'application/pdf' });
      const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/orfao/recibo.pdf`, 'file');
      await esperarAte(
        async () => (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))?.ultimo_erro?.includes('falha simulada'),
        'the first attempt failing to record its copy',
      );
      await voltarARegistrar();
      const anexo = await aguardarCopia(conversaId, 'the copy of a later attempt');
      expect(anexo.nome).toBe('recibo.pdf');
      expect(anexo.tentativas).toBeGreaterThanOrEqual(2);
      // the unrecorded copies leave file storage; the recorded one stays
      await esperarAte(async () => (await Arquivo.count({ where: { nome: 'recibo.pdf' } })) === 1, 'the unrecorded copy removed');
      // a retry that got the listed copy back recorded it with its line kept: the removal, finding
      // it recorded, keeps the file and drops the line
      await esperarAte(async () => !(await pendentes()).includes(anexo.arquivo_id!), 'the recorded copy off the removal list');
      expect((await Arquivo.findAll({ where: { nome: 'recibo.pdf' } })).map((a) => a.id)).toEqual([anexo.arquivo_id]);
    } finally {
      await voltarARegistrar();
    }
  });

  it('two failures and then a success: copied, with tentativas 3, each attempt the configured wait after the one before (SPEC 4.6 rule 7)', async () => {
    const tempos: number[] = [];
    const chat = nock(CHAT)
      .get('/rails/active_storage/instavel.png')
      .times(2)
      .reply(() => (tempos.push(Date.now()), [503]))
      .get('/rails/active_storage/instavel.png')
      .reply(() => (tempos.push(Date.now()), [200, Buffer.from('png'), { 'content-type': 'image/png' }]));
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/instavel.png`);
    const anexo = await aguardarCopia(conversaId, 'the copy after two failures');
    expect(chat.isDone()).toBe(true);
    expect(anexo).toMatchObject({ tentativas: 3, tipo_mime: 'image/png', tamanho: 3 });
    expect(tempos).toHaveLength(3);
    for (let i = 1; i < tempos.length; i++) expect(tempos[i] - tempos[i - 1]).toBeGreaterThanOrEqual(ESPERA_ENTRE_TENTATIVAS_MS - 5);
  });

  it('after the first attempt and 5 more it stops: no file, tentativas 6, the last error kept', async () => {
    const chat = nock(CHAT).get('/rails/active_storage/sumiu.jpg').times(TENTATIVAS_DE_COPIA).reply(404);
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/sumiu.jpg`);
    await esperarAte(async () => (await anexoDe(conversaId)).tentativas === TENTATIVAS_DE_COPIA, 'six attempts');
    expect(TENTATIVAS_DE_COPIA).toBe(6);
    await dormir(ESPERA_ENTRE_TENTATIVAS_MS * 3);
    expect(chat.isDone()).toBe(true);
    expect(await anexoDe(conversaId)).toMatchObject({ arquivo_id: null, url: null, tipo_mime: null, tamanho: null, tentativas: 6 });
    const guardado = await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } });
    expect(guardado!.ultimo_erro).toContain('404');
  });

  it('attempts are counted by the database, not by the job: one run again after a crash, or queued again by the sweep (its own count back at 1), never makes a seventh', async () => {
    const chat = nock(CHAT).get('/rails/active_storage/reiniciado.jpg').reply(500);
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/reiniciado.jpg`);
    const anexo = await esperarAte(async () => {
      const a = await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } });
      return a?.ultimo_erro && a;
    }, 'the first attempt failed');
    await tirarDaFila(anexo.id);
    expect(chat.isDone()).toBe(true);
    // five made before crashes cut the job short
    await AnexoDaMensagem.update({ tentativas: 5 }, { where: { id: anexo.id } });
    const sexta = nock(CHAT).get('/rails/active_storage/reiniciado.jpg').reply(500);
    await expect(copiarAnexo(anexo.id)).rejects.toThrow();
    expect(sexta.isDone()).toBe(true);
    expect((await AnexoDaMensagem.findByPk(anexo.id))!.tentativas).toBe(6);

    const setima = nock(CHAT).get('/rails/active_storage/reiniciado.jpg').reply(200, 'x', { 'content-type': 'image/jpeg' });
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'esgotado' });
    expect(setima.isDone()).toBe(false);
    expect(await anexoDe(conversaId)).toMatchObject({ arquivo_id: null, tentativas: 6 });
  });

  it('the attempts are 30 minutes apart unless configured otherwise', () => {
    expect(loadConfig({}).sales.anexoRetryMs).toBe(30 * 60 * 1000);
    // failures of our side spend none for a week after the copy was first put off
    expect(loadConfig({}).sales.anexoAdiamentoMaximoMs).toBe(7 * 24 * 3600 * 1000);
    expect(loadConfig({ SALES_ANEXO_ADIAMENTO_MAXIMO_MS: '0' }).sales.anexoAdiamentoMaximoMs).toBe(0);
    expect(() => loadConfig({ SALES_ANEXO_ADIAMENTO_MAXIMO_MS: 'uma semana' })).toThrow('SALES_ANEXO_ADIAMENTO_MAXIMO_MS');
    const estrategia = filaSalesAnexo.opcoesDoWorker!.settings!.backoffStrategy as () => number;
    expect(estrategia()).toBe(ESPERA_ENTRE_TENTATIVAS_MS);
  });
});

describe('attachments whose copy never reached the queue', () => {
  it('the sweep enqueues them, and they are copied', async () => {
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/esquecido.txt`, 'file');
    // the first job fails on a closed network; the row is then made to look like one never enqueued
    // its failure is written after the attempt: wait for it, or it would land after the reset below
    const anexo = await esperarAte(async () => {
      const a = await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } });
      return a?.ultimo_erro && a;
    }, 'the first attempt failed');
    await tirarDaFila(anexo.id);
    await banco('sales').query('UPDATE anexo_da_mensagem SET tentativas = 0, atualizado_em = NOW(3) - INTERVAL 5 MINUTE WHERE id = ?', {
      replacements: [anexo.id],
    });
    nock(CHAT).get('/rails/active_storage/esquecido.txt').reply(200, 'olá', { 'content-type': 'text/plain' });
    expect(await varrerAnexos()).toBeGreaterThanOrEqual(1);
    const copiado = await aguardarCopia(conversaId, 'the swept copy');
    expect(copiado).toMatchObject({ tipo_mime: 'text/plain', tamanho: 4 });
  });

  it('a download that outlasts the sales token\'s life is stored with a token asked for after it, not refused by file storage with the expired one', async () => {
    const q = fila(filaSalesAnexo);
    await q.pause();
    let anexo: AnexoDaMensagem;
    try {
      const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/demorado.txt`, 'file');
      anexo = (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!;
      await q.remove(anexo.id);
    } finally {
      await q.resume();
    }
    // the token the copy starts with is the one held now, valid an hour (or one asked for now)
    let voltar = () => undefined as void;
    nock(CHAT)
      .get('/rails/active_storage/demorado.txt')
      .reply(() => {
        // the platform answers when that hour has gone by (the clock moved, not waited)
        voltar = adiantarRelogio(2 * 3600_000);
        return [200, 'demorado', { 'content-type': 'text/plain' }];
      });
    try {
      expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
    } finally {
      voltar();
    }
    expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ arquivo_id: expect.any(String), tentativas: 1, ultimo_erro: null });
  });

  it('one stored and tried by processes whose clocks run five minutes ahead is swept a minute after its last change by the database\'s clock', async () => {
    const idade = async (id: string) => {
      const [{ segundos }] = await banco('sales').query<{ segundos: number }>(
        'SELECT TIMESTAMPDIFF(SECOND, atualizado_em, UTC_TIMESTAMP(3)) AS segundos FROM anexo_da_mensagem WHERE id = ?',
        { replacements: [id], type: QueryTypes.SELECT },
      );
      return Number(segundos);
    };
    const q = fila(filaSalesAnexo);
    // no worker takes the copy meanwhile: the webhook's process alone stamps the attachment
    await q.pause();
    let anexo: AnexoDaMensagem;
    try {
      const conversaId = await comRelogioAdiantado(5 * 60_000, () => mensagemComAnexo(`${CHAT}/rails/active_storage/adiantado.txt`, 'file'));
      anexo = (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!;
      // its job lost (Redis out of reach at the webhook): only the sweep brings it back
      await q.remove(anexo.id);
    } finally {
      await q.resume();
    }
    expect(await idade(anexo.id)).toBeGreaterThanOrEqual(0);
    expect(await idade(anexo.id)).toBeLessThan(5);
    // an attempt on a worker whose clock runs ahead too (the chat platform out of reach)
    await comRelogioAdiantado(5 * 60_000, () => expect(copiarAnexo(anexo.id)).rejects.toThrow());
    expect(await idade(anexo.id)).toBeGreaterThanOrEqual(0);
    expect(await idade(anexo.id)).toBeLessThan(5);

    await varrerAnexos();
    expect(await q.getJob(anexo.id)).toBeUndefined();
    // 61 s later by the database's clock (without waiting them)
    await banco('sales').query('UPDATE anexo_da_mensagem SET atualizado_em = atualizado_em - INTERVAL 61 SECOND WHERE id = ?', { replacements: [anexo.id] });
    nock(CHAT).get('/rails/active_storage/adiantado.txt').reply(200, 'adiantado', { 'content-type': 'text/plain' });
    await varrerAnexos();
    expect(await esperarAte(async () => (await AnexoDaMensagem.findByPk(anexo.id))?.arquivo_id, 'the swept copy')).toEqual(expect.any(String));
  });

  it('more copies put off than the sweep reads at once do not hide a newer attachment whose job was lost: the sweep reads the longest unchanged first', async () => {
    const q = fila(filaSalesAnexo);
    const anexoDaConversa = async (conversaId: string) => (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!;
    const mudar = (id: string, criado: string, atualizado: string) =>
      banco('sales').query(
        `UPDATE anexo_da_mensagem SET criado_em = UTC_TIMESTAMP(3) - INTERVAL ${criado}, atualizado_em = UTC_TIMESTAMP(3) - INTERVAL ${atualizado} WHERE id = ?`,
        { replacements: [id] },
      );
    // no worker runs these copies: their jobs wait, as a copy put off waits delayed
    await q.pause();
    const ids: string[] = [];
    try {
      // three older attachments put off for days, each run (30 minutes apart) changing them
      const adiados: string[] = [];
      for (let i = 0; i < 3; i++) adiados.push((await anexoDaConversa(await mensagemComAnexo(`${CHAT}/rails/active_storage/adiado-${i}.txt`, 'file'))).id);
      for (const id of adiados) await mudar(id, '3 DAY', '10 MINUTE');
      // a newer one whose job was lost (Redis out of reach at the webhook): unchanged since
      const perdido = (await anexoDaConversa(await mensagemComAnexo(`${CHAT}/rails/active_storage/perdido.txt`, 'file'))).id;
      await q.remove(perdido);
      await mudar(perdido, '1 HOUR', '1 HOUR');
      ids.push(...adiados, perdido);

      // a page of two, fewer than the copies put off
      expect(await varrerAnexos(2)).toBe(2);
      expect(await q.getJob(perdido)).toBeDefined();
    } finally {
      // left out of the other tests: their jobs gone, their attempts used up
      for (const id of ids) await q.remove(id);
      if (ids.length) await banco('sales').query('UPDATE anexo_da_mensagem SET tentativas = ? WHERE id IN (?)', { replacements: [TENTATIVAS_DE_COPIA, ids] });
      await q.resume();
    }
  });

  it('a copy of an attachment already copied, or gone, does nothing', async () => {
    expect(await copiarAnexo('019a0000-0000-7000-8000-000000000000')).toEqual({ estado: 'inexistente' });
    nock(CHAT).get('/rails/active_storage/uma-vez.txt').reply(200, 'x', { 'content-type': 'text/plain' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/uma-vez.txt`, 'file');
    await esperarAte(async () => (await anexoDe(conversaId)).arquivo_id, 'the copy');
    const anexo = (await AnexoDaMensagem.findOne({ where: { conversa_id: conversaId } }))!;
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'ja_copiado' });
  });
});

describe('a message deleted in the chat platform', () => {
  /** A message whose image at `caminho` of the chat platform is copied: its event, conversation and copy. */
  async function mensagemCopiada(caminho: string) {
    nock(CHAT).get(caminho).reply(200, randomBytes(100), { 'content-type': 'image/jpeg' });
    const criada = eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'foto', anexos: [{ id: idDoSuporte(), data_url: `${CHAT}${caminho}`, file_type: 'image' }] });
    const { conversa_id } = await t.s.registrar(t.sistema, criada);
    const { arquivo_id } = await aguardarCopia(conversa_id);
    return { criada, conversa_id, arquivo_id };
  }

  it('loses its attachments, as there: none listed, quantidade_anexos 0, and the copy leaves file storage', async () => {
    const { criada, conversa_id, arquivo_id } = await mensagemCopiada('/rails/active_storage/apagada.jpg');
    // what Chatwoot sends when a message is deleted: its notice, deleted: true, no attachments
    const apagada = { ...criada, event: 'message_updated', content: 'This message was deleted', content_attributes: { deleted: true }, attachments: [] };
    expect(await t.s.registrar(t.sistema, apagada)).toMatchObject({ conversa_id, mensagens_novas: 0 });
    const [m] = await t.s.mensagens(conversa_id);
    expect(m).toMatchObject({ conteudo: 'This message was deleted', quantidade_anexos: 0, anexos: [] });
    // the copy leaves file storage, then the removal list
    await esperarAte(async () => (await Arquivo.count({ where: { id: arquivo_id } })) === 0 && !(await pendentes()).includes(arquivo_id), 'the copy removed');
  });

  it('a deletion while a copy is being recorded waits for it, and that copy leaves file storage too', async () => {
    const { criada, conversa_id, arquivo_id } = await mensagemCopiada('/rails/active_storage/corrida.jpg');
    const anexo = (await AnexoDaMensagem.findOne({ where: { conversa_id } }))!;
    // as just before the copy's record: the attachment without its file, then a copy job writing it, uncommitted
    await AnexoDaMensagem.update({ arquivo_id: null }, { where: { id: anexo.id } });
    const copia = await novaConexao('sales');
    try {
      await copia.beginTransaction();
      await copia.query('UPDATE anexo_da_mensagem SET arquivo_id = ? WHERE id = ?', [arquivo_id, anexo.id]);
      const apagada = { ...criada, event: 'message_updated', content: 'This message was deleted', content_attributes: { deleted: true }, attachments: [] };
      const webhook = t.s.registrar(t.sistema, apagada);
      await esperarOutraConexao(copia, 'the deletion waiting on the attachment', ['%anexo_da_mensagem%']);
      await copia.commit();
      expect(await webhook).toMatchObject({ conversa_id });
    } finally {
      await copia.end();
    }
    await esperarAte(async () => (await Arquivo.count({ where: { id: arquivo_id } })) === 0, 'the copy recorded meanwhile removed');
  });

  it('an edit keeps the attachments', async () => {
    const { criada, conversa_id, arquivo_id } = await mensagemCopiada('/rails/active_storage/editada.jpg');
    await t.s.registrar(t.sistema, { ...criada, event: 'message_updated', content: 'foto do pedido' });
    const [m] = await t.s.mensagens(conversa_id);
    expect(m).toMatchObject({ conteudo: 'foto do pedido', quantidade_anexos: 1, anexos: [expect.objectContaining({ arquivo_id })] });
    expect(await Arquivo.count({ where: { id: arquivo_id } })).toBe(1);
  });
});

describe('SPEC §3: deleting a conversation for good', () => {
  it('removes the copies of its attachments from file storage', async () => {
    nock(CHAT).get('/rails/active_storage/privado.jpg').reply(200, randomBytes(100), { 'content-type': 'image/jpeg' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/privado.jpg`);
    const { arquivo_id } = await aguardarCopia(conversaId);
    expect(await Arquivo.count({ where: { id: arquivo_id } })).toBe(1);
    expect((await t.s.api.del(`/conversa/${conversaId}`, { token: await t.s.admin() })).status).toBe(204);
    await esperarAte(async () => (await Arquivo.count({ where: { id: arquivo_id } })) === 0, 'the copy removed');
  });

  it('copies recorded for removal wait there while file storage fails, and leave once it answers', async () => {
    nock(CHAT).get('/rails/active_storage/guardado.jpg').reply(200, randomBytes(10), { 'content-type': 'image/jpeg' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/guardado.jpg`);
    const { arquivo_id } = await aguardarCopia(conversaId);
    const urlDoFiles = config().servicos.files.url;
    config().servicos.files.url = 'http://127.0.0.1:9';
    try {
      expect((await t.s.api.del(`/conversa/${conversaId}`, { token: await t.s.admin() })).status).toBe(204);
      expect(await pendentes()).toContain(arquivo_id);
      await expect(apagarCopiasPendentes()).rejects.toThrow();
      expect(await Arquivo.count({ where: { id: arquivo_id } })).toBe(1);
    } finally {
      config().servicos.files.url = urlDoFiles;
    }
    await apagarCopiasPendentes();
    expect(await Arquivo.count({ where: { id: arquivo_id } })).toBe(0);
    expect(await pendentes()).not.toContain(arquivo_id);
  });

  it('a burst of deletions queues one removal, and one to follow a removal under way: none is missed', async () => {
    const q = fila(filaSalesAnexo);
    const remocoesNaFila = async () => (await q.getJobs(['wait', 'delayed', 'prioritized'])).filter((j) => j.name === 'apagar').length;
    const remocoes = async () => (await q.getJobs(['active', 'wait', 'delayed', 'prioritized'])).filter((j) => j.name === 'apagar').length;
    await q.pause();
    try {
      for (let i = 0; i < 5; i++) await enfileirarRemocao();
      expect(await remocoesNaFila()).toBe(1);
    } finally {
      await q.resume();
    }
    // taken by the worker as soon as it is free (a loaded machine may keep it busy a while)
    await esperarAte(async () => (await remocoesNaFila()) === 0, 'the removal run', 30_000);

    // a removal held on its last step by a listed copy locked here: it read the list before the deletion below
    nock(CHAT).get('/rails/active_storage/depois.jpg').reply(200, randomBytes(10), { 'content-type': 'image/jpeg' });
    const conversaId = await mensagemComAnexo(`${CHAT}/rails/active_storage/depois.jpg`);
    const { arquivo_id } = await aguardarCopia(conversaId);
    const presa = randomUUID();
    await banco('sales').query('INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, NOW(3) - INTERVAL 1 DAY)', { replacements: [presa] });
    const trava = await novaConexao('sales');
    try {
      await trava.beginTransaction();
      await trava.query('SELECT * FROM arquivo_a_apagar WHERE arquivo_id = ? FOR UPDATE', [presa]);
      await enfileirarRemocao();
      await esperarOutraConexao(trava, 'the removal held on the locked copy', ['DELETE FROM arquivo_a_apagar%']);
      expect((await t.s.api.del(`/conversa/${conversaId}`, { token: await t.s.admin() })).status).toBe(204);
      for (let i = 0; i < 3; i++) await enfileirarRemocao();
      // the run under way alone: the one to follow is made when it ends
      expect(await remocoes()).toBe(1);
      await trava.rollback();
    } finally {
      await trava.end();
    }
    await esperarAte(async () => (await Arquivo.count({ where: { id: arquivo_id } })) === 0, "the deleted conversation's copy removed by the run that followed");
    expect(await pendentes()).not.toContain(presa);
  });
});

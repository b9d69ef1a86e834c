import { sorteio } from '../helpers/aleatorio';
import { eventoDeConversa, eventoDeMensagem, idDeMensagem, idDoSuporte, novoContato, salesNesteArquivo } from './apoio';

/**
 * The chat platform's webhooks come in no guaranteed order, some twice, some together (DESIGN §7,
 * docs/sales.md): whatever the order, a conversation must end as its platform left it. Each round
 * draws a conversation (seeded, so a failure names a round that replays): messages from the contact
 * or the team, private notes among them, edits and deletions with their `updated_at`, and copies of
 * the conversation with a status and their own `updated_at`, in message and status events. They are
 * sent shuffled, some repeated, in small concurrent groups; then the record must hold the visible
 * messages in sending order with their last text, the counters and last-message fields of those,
 * and the status of the newest copy.
 */

const t = salesNesteArquivo({ workers: false });

const STATUS = ['pending', 'open', 'resolved', 'snoozed'];
const AVISO_DE_APAGADA = 'This message was deleted';
const RODADAS = 30;
/** a time as the record answers it, to the second */
const aoSegundo = (ms: number | string | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString().slice(0, 19));

/** A message's last text: the deletion notice once deleted, else the newest edit's. */
const textoFinal = (m: Mensagem) => (m.versoes.some((v) => v.apagada) ? AVISO_DE_APAGADA : m.versoes.at(-1)!.conteudo);

interface Mensagem {
  id: number;
  criada: number;
  tipo: 'incoming' | 'outgoing';
  privada: boolean;
  versoes: { conteudo: string; em: number; apagada?: boolean }[];
}

test(`in ${RODADAS} drawn rounds, message and status events in any order, repeated or together, end in the record the platform holds`, async () => {
  const { s } = t;
  const sistema = await s.criarSistema('suporte', { url: 'https://chat.exemplo.test', conta_id: 1 });
  const admin = await s.admin();
  const diferencas: unknown[] = [];
  for (let rodada = 0; rodada < RODADAS; rodada++) {
    const { proximo, um, embaralhar } = sorteio(1000 + rodada);
    const conversa = idDoSuporte();
    const contato = novoContato();
    const inicio = Date.now() - 3_600_000;
    const mensagens: Mensagem[] = Array.from({ length: 6 }, (_, i) => {
      const criada = inicio + i * 60_000;
      const versoes: Mensagem['versoes'] = [{ conteudo: `m${i} v0`, em: criada }];
      const edicoes = Math.floor(proximo() * 3);
      for (let e = 1; e <= edicoes; e++) versoes.push({ conteudo: `m${i} v${e}`, em: criada + e * 1000 });
      // a deletion applies whatever its time, and nothing after it does: stamped after the edits,
      // before them (a late delivery of an older copy would not apply), or not at all (as Chatwoot
      // often sends it)
      if (proximo() < 0.3) versoes.push({ conteudo: AVISO_DE_APAGADA, em: um([criada + 9000, criada + 500, NaN]), apagada: true });
      return { id: idDeMensagem(), criada, tipo: proximo() < 0.5 ? 'incoming' : 'outgoing', privada: proximo() < 0.15, versoes };
    });
    // the conversation's copies, each with its status and its platform time (distinct, after the messages)
    const copias: { em: number; status: string }[] = [];
    const novaCopia = () => {
      const copia = { em: inicio + 10 * 60_000 + copias.length * 1000 + Math.floor(proximo() * 500), status: um(STATUS) };
      copias.push(copia);
      return copia;
    };
    const eventos: unknown[] = Array.from({ length: 3 }, () => {
      const copia = novaCopia();
      return { ...eventoDeConversa('conversation_status_changed', { conversa, status: copia.status, contato }), updated_at: copia.em / 1000 };
    });
    for (const m of mensagens) {
      m.versoes.forEach((v, i) => {
        const evento = eventoDeMensagem({
          conversa,
          contato,
          mensagem: m.id,
          conteudo: v.conteudo,
          criadaEm: new Date(m.criada),
          tipo: m.tipo,
          privada: m.privada,
          evento: i === 0 ? 'message_created' : 'message_updated',
        });
        const copia = novaCopia();
        eventos.push({
          ...evento,
          updated_at: Number.isNaN(v.em) ? undefined : new Date(v.em).toISOString(),
          ...(v.apagada ? { content_attributes: { deleted: true } } : {}),
          conversation: { ...evento.conversation, status: copia.status, updated_at: copia.em / 1000 },
        });
      });
    }
    const enviados = embaralhar([...eventos, ...eventos.filter(() => proximo() < 0.3)]);
    for (let i = 0; i < enviados.length; ) {
      const grupo = enviados.slice(i, (i += 1 + Math.floor(proximo() * 3)));
      for (const res of await Promise.all(grupo.map((e) => s.webhook(sistema, e)))) expect([rodada, res.status]).toEqual([rodada, 200]);
    }

    const visiveis = mensagens.filter((m) => !m.privada);
    const ultima = visiveis.at(-1);
    const esperado = {
      rodada,
      mensagens: visiveis.map(textoFinal),
      status: copias.reduce((a, b) => (b.em > a.em ? b : a)).status,
      quantidade_mensagens: visiveis.length,
      ultima_mensagem: ultima ? textoFinal(ultima) : '',
      ultima_mensagem_em: aoSegundo(ultima?.criada),
      ultima_mensagem_do_contato_em: aoSegundo(visiveis.filter((m) => m.tipo === 'incoming').at(-1)?.criada),
    };
    const { id } = await s.conversaDoSuporte(conversa);
    const registro = (await s.api.get(`/conversa/${id}`, { token: admin })).body;
    const obtido = {
      rodada,
      mensagens: (await s.mensagens(id)).map((m) => m.conteudo),
      status: registro.status,
      quantidade_mensagens: registro.quantidade_mensagens,
      ultima_mensagem: registro.ultima_mensagem,
      ultima_mensagem_em: aoSegundo(registro.ultima_mensagem_em),
      ultima_mensagem_do_contato_em: aoSegundo(registro.ultima_mensagem_do_contato_em),
    };
    // the order sent goes with a difference: the ids are drawn anew each run, the order is not
    const ordem = enviados.map((e: any) => `${e.event}${e.id === undefined || e.event?.startsWith('conversation') ? '' : ` ${e.id}`}`);
    if (JSON.stringify(obtido) !== JSON.stringify(esperado)) diferencas.push({ obtido, esperado, ordem });
  }
  expect(diferencas).toEqual([]);
}, 120_000);

import { eventoDeConversa, eventoDeMensagem, eventoDoGateway, idDeMensagem, idDoSuporte, mensagemAninhada, Sales, salesNesteArquivo } from './apoio';

/**
 * The webhooks read payloads of another system's making: an event with any one of its values
 * replaced by an odd one (another JSON kind, out of range, huge, a control character) is taken or
 * refused with a 4xx, never a 5xx, whichever value it is (a 5xx would have the platform retry a
 * payload that can never be stored).
 */

const t = salesNesteArquivo({ workers: false });

const VALORES: unknown[] = [null, -1, 2 ** 63, 1.5, 'x'.repeat(3000), '', [], { a: [] }, '\u0000', '2026-01-01T00:00:00Z'];

/** Every path in a JSON value, its root included. */
function caminhos(no: unknown, prefixo: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(no)) return [prefixo, ...no.flatMap((v, i) => caminhos(v, [...prefixo, i]))];
  if (no && typeof no === 'object') return [prefixo, ...Object.entries(no).flatMap(([k, v]) => caminhos(v, [...prefixo, k]))];
  return [prefixo];
}

function comValor(no: any, caminho: (string | number)[], valor: unknown): any {
  if (!caminho.length) return valor;
  const copia = Array.isArray(no) ? [...no] : { ...no };
  copia[caminho[0]] = comValor(no[caminho[0]], caminho.slice(1), valor);
  return copia;
}

test('an event with any one value made odd answers below 500, for the chat platform and the gateway', async () => {
  const { s } = t;
  const suporte = await s.criarSistema('suporte', { url: 'https://chat.exemplo.test', conta_id: 1 });
  const gateway = await s.criarSistema('gateway');
  const anexo = { id: 5, data_url: 'https://chat.exemplo.test/rails/active_storage/a.png', file_type: 'image' };
  const conversa = idDoSuporte();
  // with the times the platform writes (the conversation's and the message's `updated_at`) and a
  // message copy in `conversation.messages`, so odd values reach their readers too
  const aninhada = { ...mensagemAninhada({ id: idDeMensagem(), conversa, conteudo: 'copiada', tipo: 0 }), updated_at: '2026-01-01T00:00:00.000Z' };
  const mensagem = eventoDeMensagem({ conversa, anexos: [anexo], etapa: 'etapa-1' });
  const eventos: [string, any, (corpo: unknown) => ReturnType<Sales['webhook']>][] = [
    [
      'message_created',
      { ...mensagem, updated_at: '2026-01-01T00:00:00.000Z', conversation: { ...mensagem.conversation, updated_at: 1767225600.5, messages: [aninhada] } },
      (c) => s.webhook(suporte, c),
    ],
    [
      'conversation_status_changed',
      { ...eventoDeConversa('conversation_status_changed', { conversa: idDoSuporte(), status: 'open', mensagens: [aninhada] }), updated_at: 1767225600.5, account: { id: 1, name: 'Conta' } },
      (c) => s.webhook(suporte, c),
    ],
    ['messages.upsert', eventoDoGateway('5511999998888', '5511988887777'), (c) => s.gateway(gateway, c)],
  ];
  const falhas: string[] = [];
  let chamadas = 0;
  for (const [nome, evento, enviar] of eventos) {
    // the events as they are are taken
    expect([nome, (await enviar(evento)).status]).toEqual([nome, 200]);
    for (const caminho of caminhos(evento)) {
      for (const valor of VALORES) {
        chamadas++;
        // a new message each time (unless its id is the value made odd): a repeat would only meet the repeat's path
        const novo = nome === 'message_created' ? { ...evento, id: idDeMensagem() } : evento;
        const res = await enviar(comValor(novo, caminho, valor));
        if (res.status >= 500) falhas.push(`${nome} ${caminho.join('.')} = ${JSON.stringify(valor).slice(0, 40)} -> ${res.status} ${res.text.slice(0, 160)}`);
      }
    }
  }
  expect(chamadas).toBeGreaterThan(1000);
  expect(falhas).toEqual([]);
}, 300_000);

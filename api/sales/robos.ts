import { CacheComPrazo } from '../../lib/cache';
import { Robo } from '../../models/sales';
import { criarCadastro } from './cadastros';

/** The robots' chat-platform identities: users and agent bots (their ids are counted apart). */
export interface IdentidadesDosRobos {
  usuarios: Map<number, string>;
  bots: Map<number, string>;
}

const identidades = new CacheComPrazo<'robos', IdentidadesDosRobos>(() => 30_000);

/** AI service robots a conversation links to (SPEC 4.6 rule 6 `robo_id`). */
export const robos = criarCadastro({
  modelo: Robo,
  oQue: 'Robô',
  colunaDoNome: 'nome',
  colunasDaBusca: ['nome'],
  campos: ['nome', 'descricao', 'suporte_usuario_id', 'suporte_bot_id'],
  numeros: ['suporte_usuario_id', 'suporte_bot_id'],
  aoMudar: () => identidades.esquecer(),
  // a chat identity answers for one live robot (migration 0014): a message of it links no other
  unicos: {
    robo_suporte_usuario_vivo: { campo: 'suporte_usuario_id', mensagem: 'Outro robô já responde como este usuário da plataforma de atendimento.' },
    robo_suporte_bot_vivo: { campo: 'suporte_bot_id', mensagem: 'Outro robô já responde como este agent bot da plataforma de atendimento.' },
  },
});

/**
 * Who answers as each robot in the chat platform, to its robot id: a message from one of them is
 * the robot's (DESIGN §10). Another process's change is seen within 30 seconds.
 */
export function identidadesDosRobos(): Promise<IdentidadesDosRobos> {
  return identidades.obterOuCarregar('robos', async () => {
    const lista = await Robo.findAll({ attributes: ['id', 'suporte_usuario_id', 'suporte_bot_id'] });
    const por = (campo: 'suporte_usuario_id' | 'suporte_bot_id') =>
      new Map(lista.filter((r) => r[campo] !== null).map((r) => [Number(r[campo]), r.id]));
    return { usuarios: por('suporte_usuario_id'), bots: por('suporte_bot_id') };
  });
}

import { CacheComPrazo } from '../../lib/cache';
import { Robo } from '../../models/sales';
import { criarCadastro } from './cadastros';

const porUsuario = new CacheComPrazo<'robos', Map<number, string>>(() => 30_000);

/** AI service robots a conversation links to (SPEC 4.6 rule 6 `robo_id`). */
export const robos = criarCadastro({
  modelo: Robo,
  oQue: 'Robô',
  colunaDoNome: 'nome',
  colunasDaBusca: ['nome'],
  campos: ['nome', 'descricao', 'suporte_usuario_id'],
  numeros: ['suporte_usuario_id'],
  aoMudar: () => porUsuario.esquecer(),
});

/**
 * The chat-platform user (or agent bot) each robot answers as, to its robot id: a message from
 * one of them is the robot's (DESIGN §10). Another process's change is seen within 30 seconds.
 */
export function usuariosDosRobos(): Promise<Map<number, string>> {
  return porUsuario.obterOuCarregar('robos', async () => {
    const lista = await Robo.findAll({ attributes: ['id', 'suporte_usuario_id'] });
    return new Map(lista.filter((r) => r.suporte_usuario_id !== null).map((r) => [Number(r.suporte_usuario_id), r.id]));
  });
}

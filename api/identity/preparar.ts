import { randomBytes } from 'node:crypto';
import { config } from '../../config';
import { APLICATIVOS_DA_SUITE } from '../../config/services';
import { Credenciais, gravarCredenciaisLocais, lerCredenciaisLocais } from '../../lib/credenciais';
import { logger } from '../../lib/logger';
import { Aplicativo, Usuario } from '../../models/identity';
import { novoSegredo, segredoTrocado } from './aplicativos';
import { carregarChaves } from './chaves';
import { hashDoSegredo } from './login';
import { titularMudou } from './titulares';
import { criarUsuario, publicarMastersDoAmbiente } from './usuarios';

const log = logger('identity');

const NOMES: Record<string, string> = {
  hub: 'Webhook hub',
  identity: 'Identity',
  intranet: 'Intranet',
  sales: 'Vendas',
  tracing: 'Tracing',
};

/**
 * DESIGN §2: with no user at all, a master is created from IDENTITY_ADMIN_EMAIL/SENHA (or a random
 * password, printed once). Printed once on a laptop's terminal; outside LOCALHOST the standard
 * output is the log stream, which would keep a master's password for anyone who reads the logs:
 * there the first start refuses without IDENTITY_ADMIN_SENHA.
 */
async function criarAdminInicial(): Promise<void> {
  if ((await Usuario.count({ paranoid: false })) > 0) return;
  const email = config().identity.adminEmail ?? 'admin@suite.local';
  const informada = config().identity.adminSenha;
  if (!informada && config().ambiente !== 'LOCALHOST') {
    throw new Error(
      'identity has no user yet: outside LOCALHOST set IDENTITY_ADMIN_SENHA for the first master (a random password would be printed into the logs)',
    );
  }
  const senha = informada ?? randomBytes(12).toString('base64url');
  // as any collaborator: subscribers of colaborador.* learn of it too (DESIGN §3)
  await criarUsuario({ nome: 'Administrador', email, perfil: 'colaborador', e_master: true, senha });
  log.info({ email }, 'usuário master inicial criado');
  if (!informada) process.stdout.write(`\nUsuário master inicial: ${email}\nSenha (mostrada só agora): ${senha}\n\n`);
}

/**
 * LOCALHOST: the suite's own services are applications of the identity service (DESIGN §3).
 * Registered once; their credentials are kept in the local data folder and reused while they
 * still match, so processes started apart keep working.
 */
async function registrarAplicativosDaSuite(): Promise<void> {
  const guardadas = await lerCredenciaisLocais();
  const novas: Credenciais = {};
  for (const servico of APLICATIVOS_DA_SUITE) {
    const doAmbiente = config().servicos[servico];
    if (doAmbiente.clientId && doAmbiente.clientSecret) continue;
    let app = await Aplicativo.findOne({ where: { servico_da_suite: servico } });
    const anterior = guardadas[servico];
    if (app && anterior && anterior.clientId === app.id && hashDoSegredo(anterior.clientSecret) === app.segredo_hash) {
      novas[servico] = anterior;
      continue;
    }
    const segredo = novoSegredo();
    if (app) {
      await app.update({ ...segredoTrocado(segredo), ativo: true });
      await titularMudou('aplicativo', app.id);
    } else {
      app = await Aplicativo.create({
        nome: NOMES[servico] ?? servico,
        descricao: `Serviço ${servico} da suíte`,
        segredo_hash: hashDoSegredo(segredo),
        servico_da_suite: servico,
      });
    }
    novas[servico] = { clientId: app.id, clientSecret: segredo };
  }
  // read from the file by every service (lib/credenciais.ts), this process's own included: config
  // keeps only what the environment says, so a refusal names the file, not <SERVICE>_CLIENT_SECRET
  await gravarCredenciaisLocais(novas);
}

/**
 * The applications this process's environment names as the suite's (`<SERVICE>_CLIENT_ID`), in
 * every environment: outside LOCALHOST a master creates them with POST /aplicativo, and unmarked
 * they could be deleted or deactivated, which stops the service's work for good (identity's own
 * events: its `colaborador.*` types stay owned at the hub by the application deleted). The mark
 * moves to the application named now from any other that held it (a service given new credentials).
 */
async function marcarAplicativosDoAmbiente(): Promise<void> {
  for (const servico of APLICATIVOS_DA_SUITE) {
    const id = config().servicos[servico].clientId;
    if (!id) continue;
    const app = await Aplicativo.findByPk(id);
    if (!app) {
      log.warn({ servico, client_id: id }, `${servico.toUpperCase()}_CLIENT_ID não é de nenhum aplicativo do identity`);
      continue;
    }
    if (app.servico_da_suite === servico) continue;
    await Aplicativo.sequelize!.transaction(async (transaction) => {
      await Aplicativo.update({ servico_da_suite: null }, { where: { servico_da_suite: servico }, paranoid: false, transaction });
      await app.update({ servico_da_suite: servico }, { transaction });
    });
    log.info({ servico, client_id: id }, 'aplicativo do ambiente marcado como serviço da suíte');
  }
}

export async function prepararIdentity(): Promise<void> {
  await carregarChaves();
  await criarAdminInicial();
  await marcarAplicativosDoAmbiente();
  if (config().ambiente === 'LOCALHOST') await registrarAplicativosDaSuite();
  else await avisarSemAplicativoProprio();
}

/**
 * Outside LOCALHOST identity publishes its `colaborador.*` events with an application of its own,
 * which a master creates after the first start and IDENTITY_CLIENT_ID names: until then they are
 * stored and retried, unsent. Said at every start, where the operator looks first, not only in
 * the retries' warnings.
 */
async function avisarSemAplicativoProprio(): Promise<void> {
  // the outbox's own lookup (tokenDoIdentity): the id named, else the application marked
  const clientId = config().servicos.identity.clientId;
  if (await Aplicativo.findOne({ where: clientId ? { id: clientId } : { servico_da_suite: 'identity' }, attributes: ['id'] })) return;
  log.error(
    { configuracao: 'IDENTITY_CLIENT_ID' },
    'o identity não tem aplicativo próprio: os eventos colaborador.* ficam guardados, sem chegar ao hub, até que IDENTITY_CLIENT_ID nomeie um (criado com POST /aplicativo)',
  );
}

/**
 * An identity API's start: collaborators whose `e_master` changed with MASTER_EMAILS are published
 * (publicarMastersDoAmbiente). Only where the API runs, whose list is the one its answers and
 * tokens follow: a worker started without the list would otherwise publish every listed master
 * demoted, and the next API start promoted again.
 */
export async function publicarMastersAoServir(): Promise<void> {
  const mudados = await publicarMastersDoAmbiente();
  if (mudados) log.info({ colaboradores: mudados }, 'MASTER_EMAILS mudou: colaborador.atualizado publicado');
}

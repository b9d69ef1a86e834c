import { ModelStatic, Op, WhereOptions } from 'sequelize';
import { iso } from '../../../models/shared/base';
import { ColaboradorBase } from '../../../models/shared/colaborador';
import { Acao, PerfilAcessoBase, Permissoes } from '../../../models/shared/perfil-acesso';
import { conflito, naoEncontrado } from '../errors';
import { mudarSobTrava } from '../sob-trava';
import { contem, offset, PaginaNumerada } from '../paginacao';
import { Autoridade, ConferirAlcance } from './permissoes';

export const ACESSO_INICIAL = 'Acesso inicial';

export interface PerfilAcessoJson {
  id: string;
  nome: string;
  descricao: string | null;
  permissoes: Permissoes;
  sistema: boolean;
  criado_em: string;
  atualizado_em: string;
}

export function perfilJson(p: PerfilAcessoBase): PerfilAcessoJson {
  return {
    id: p.id,
    nome: p.nome,
    descricao: p.descricao,
    permissoes: p.permissoes,
    sistema: p.sistema,
    criado_em: iso(p.criado_em)!,
    atualizado_em: iso(p.atualizado_em)!,
  };
}

/** Same actions in a fixed order, no repeats, empty areas dropped. */
function normalizar(permissoes: Permissoes): Permissoes {
  const ordem: Acao[] = ['ler', 'criar', 'editar', 'deletar'];
  const saida: Permissoes = {};
  for (const [area, acoes] of Object.entries(permissoes)) {
    const lista = ordem.filter((a) => acoes.includes(a));
    if (lista.length) saida[area] = lista;
  }
  return saida;
}

export interface EntradaDePerfil {
  nome?: string;
  descricao?: string | null;
  permissoes?: Permissoes;
}

/** Access profiles of one service (DESIGN §3). */
export function criarPerfis(
  PerfilAcesso: ModelStatic<PerfilAcessoBase>,
  Colaborador: ModelStatic<ColaboradorBase>,
  conferirAlcance: ConferirAlcance,
  aoMudar: () => void,
) {
  async function existente(id: string): Promise<PerfilAcessoBase> {
    const perfil = await PerfilAcesso.findByPk(id);
    if (!perfil) throw naoEncontrado('Perfil de acesso');
    return perfil;
  }

  return {
    async listar(pagina: number, tamanho: number): Promise<PaginaNumerada<PerfilAcessoJson>> {
      const { rows, count } = await PerfilAcesso.findAndCountAll({
        order: [['nome', 'ASC'], ['id', 'ASC']],
        offset: offset(pagina, tamanho),
        limit: tamanho,
      });
      return { itens: rows.map(perfilJson), pagina, tamanho, total: count };
    },

    async filtrar(nome?: string): Promise<PerfilAcessoJson[]> {
      const where: WhereOptions = nome ? { nome: { [Op.like]: contem(nome) } } : {};
      const perfis = await PerfilAcesso.findAll({ where, order: [['nome', 'ASC'], ['id', 'ASC']] });
      return perfis.map(perfilJson);
    },

    async porId(id: string): Promise<PerfilAcessoJson> {
      return perfilJson(await existente(id));
    },

    async criar(entrada: Required<Pick<EntradaDePerfil, 'nome' | 'permissoes'>> & EntradaDePerfil, autoridade: Autoridade): Promise<PerfilAcessoJson> {
      const permissoes = normalizar(entrada.permissoes);
      const perfil = await PerfilAcesso.sequelize!.transaction(async (transaction) => {
        conferirAlcance(permissoes, await autoridade(transaction));
        return PerfilAcesso.create({ nome: entrada.nome, descricao: entrada.descricao || null, permissoes }, { transaction });
      });
      return perfilJson(perfil);
    },

    async atualizar(id: string, entrada: EntradaDePerfil, autoridade: Autoridade): Promise<PerfilAcessoJson> {
      // read again under lock: a deletion committed meanwhile answers 404, not a write to the deleted
      // profile; then the caller's authority (a caller editing their own profile already holds it)
      const perfil = await mudarSobTrava(PerfilAcesso, id, 'Perfil de acesso', async (perfil, transaction) => {
        if (perfil.sistema) throw conflito(`O perfil "${perfil.nome}" é do sistema e não pode ser alterado.`);
        const alcance = await autoridade(transaction);
        conferirAlcance(perfil.permissoes, alcance);
        if (entrada.permissoes !== undefined) conferirAlcance(normalizar(entrada.permissoes), alcance);
        if (entrada.nome !== undefined) perfil.nome = entrada.nome;
        // an empty description is no description
        if (entrada.descricao !== undefined) perfil.descricao = entrada.descricao || null;
        if (entrada.permissoes !== undefined) perfil.permissoes = normalizar(entrada.permissoes);
        return perfil.save({ transaction });
      });
      aoMudar();
      return perfilJson(perfil);
    },

    async deletar(id: string, autoridade: Autoridade): Promise<void> {
      // linking (and restoring a collaborator) reads the profile FOR SHARE: this count sees a link under
      // way; and the permissions checked are the ones deleted, not a change made meanwhile
      await mudarSobTrava(PerfilAcesso, id, 'Perfil de acesso', async (travado, transaction) => {
        if (travado.sistema) throw conflito(`O perfil "${travado.nome}" é do sistema e não pode ser removido.`);
        conferirAlcance(travado.permissoes, await autoridade(transaction));
        const emUso = await Colaborador.count({ where: { perfil_acesso_id: id }, transaction });
        if (emUso) throw conflito(`O perfil está ligado a ${emUso} colaborador(es); desvincule-os antes.`);
        await travado.destroy({ transaction });
      });
      aoMudar();
    },

    /**
     * The read-only profile given to collaborators registered by the master-listing sync. Its
     * permissions follow the service's areas (a version that adds or drops one): changed, they
     * are forgotten at once here, as any profile edit's (`mudou` tells a sync's other processes).
     */
    async semearAcessoInicial(areas: string[]): Promise<{ perfil: PerfilAcessoBase; mudou: boolean }> {
      const permissoes = Object.fromEntries(areas.map((a) => [a, ['ler']])) as Permissoes;
      const atual = await PerfilAcesso.findOne({ where: { sistema: true, nome: ACESSO_INICIAL } });
      if (atual) {
        if (JSON.stringify(atual.permissoes) === JSON.stringify(permissoes)) return { perfil: atual, mudou: false };
        atual.permissoes = permissoes;
        await atual.save();
        aoMudar();
        return { perfil: atual, mudou: true };
      }
      const perfil = await PerfilAcesso.create({
        nome: ACESSO_INICIAL,
        descricao: 'Leitura em cada área do serviço; dado a quem é cadastrado pela listagem de um master.',
        permissoes,
        sistema: true,
      });
      return { perfil, mudou: false };
    },
  };
}

export type Perfis = ReturnType<typeof criarPerfis>;

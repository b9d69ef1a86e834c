import { config } from '../../config';
import { rotasDeAcesso } from '../shared/acesso/rotas';
import { LIMITE_EXCEDIDO, limitePorEndereco } from '../shared/limite';
import { Rota } from '../shared/rotas';
import { acessoLeads } from './acesso';
import { buscarCnpj } from './cnpj';
import { listarEmpresas } from './empresas';
import { respostas, schemas } from './schemas';

/** The registry changes once a month: a record (or its absence) may be kept by caches for an hour. */
const CACHE_DO_CNPJ = 'public, max-age=3600';

/** Leads routes: SPEC 4.2 plus the access module (DESIGN §3). */
export function rotasDeLeads(): Rota[] {
  return [
    {
      metodo: 'get',
      // `*cnpj`: the mask's slash may come unencoded (33.683.111/0002-80), making two segments
      caminho: '/api/cnpj/*cnpj',
      operacao: 'buscar_pelo_id_cnpj',
      resumo: 'Registro completo de um estabelecimento: empresa, Simples/MEI e sócios',
      acesso: 'publico',
      antes: [limitePorEndereco('leads-cnpj', config().leads.cnpjLimitePorMinuto)],
      validar: { params: schemas.paramsCnpj },
      resposta: respostas.cnpj,
      outrasRespostas: { '429': LIMITE_EXCEDIDO },
      tratar: (req, res) => {
        // a record, an unknown CNPJ (until the next import) and a malformed one (for good) alike;
        // a failure of the moment drops it (enviarProblema)
        res.setHeader('Cache-Control', CACHE_DO_CNPJ);
        return buscarCnpj(req.entrada.params.cnpj);
      },
    },
    {
      metodo: 'get',
      caminho: '/api/empresas',
      operacao: 'buscar_paginador_cnpj',
      resumo: 'Estabelecimentos em ordem de CNPJ, com filtros combináveis e total (limitado a 2.000.000)',
      acesso: 'usuario',
      permissao: acessoLeads.controle.lerEmQualquer('empresas'),
      validar: { query: schemas.empresas },
      resposta: respostas.pagina,
      outrasRespostas: { '503': 'A contagem ou a leitura da página falhou no banco de dados; tente de novo' },
      tratar: (req) => {
        const { pagina, tamanho, ...filtros } = req.entrada.query;
        return listarEmpresas(filtros, pagina, tamanho);
      },
    },
    ...rotasDeAcesso(acessoLeads),
  ];
}

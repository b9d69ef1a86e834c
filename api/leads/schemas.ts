import Joi from 'joi';
import { pagina, tamanho } from '../shared/paginacao';
import { TAMANHO_MAXIMO, TAMANHO_PADRAO } from './empresas';
import { esquemaDosFiltros } from './filtros';

export const schemas = {
  paramsCnpj: Joi.object({
    cnpj: Joi.alternatives()
      // a trailing slash (`…/0002-80/`) makes an empty last segment: the slash is a mask character
      .try(Joi.array().items(Joi.string().allow('')).max(4), Joi.string())
      .custom((v: string | string[]) => (Array.isArray(v) ? v.join('/') : v))
      .required()
      .description(
        '14 caracteres, com ou sem a máscara NN.NNN.NNN/NNNN-NN (a barra como está ou como %2F): os 12 primeiros dígitos ou letras ' +
          '(CNPJ alfanumérico, em qualquer caixa), os 2 últimos dígitos verificadores, que são conferidos (400 quando não batem)',
      ),
  }),
  empresas: Joi.object({ pagina: pagina().description('Página, a partir de 1 (abaixo de 1 vira 1; além da última, a última: `pagina` da resposta diz qual veio).'), tamanho: tamanho(TAMANHO_PADRAO, TAMANHO_MAXIMO), ...esquemaDosFiltros }),
};

const s = Joi.string();
const sn = Joi.string().allow(null);

const anulaveis = (...nomes: string[]) => Object.fromEntries(nomes.map((n) => [n, sn]));

const socio = Joi.object(
  anulaveis(
    'cnpj_basico',
    'identificador_socio',
    'identificador_socio_descricao',
    'nome_socio_razao_social',
    'cnpj_cpf_socio',
    'qualificacao_socio',
    'qualificacao_socio_descricao',
    'data_entrada_sociedade',
    'pais',
    'pais_descricao',
    'representante_legal',
    'nome_representante',
    'qualificacao_representante',
    'qualificacao_representante_descricao',
    'faixa_etaria',
  ),
);

const resumo = Joi.object({
  cnpj: s.required(),
  ...anulaveis(
    'correio_eletronico',
    'ddd_1',
    'ddd_2',
    'empresa_capital_social',
    'empresa_razao_social',
    'logradouro',
    'municipio_descricao',
    'nome_fantasia',
    'numero',
    'situacao_cadastral_descricao',
    'telefone_1',
    'telefone_2',
    'tipo_logradouro',
    'uf',
  ),
});

/** SPEC §2 Cnpj: every other field is an optional nullable string. */
const CAMPOS_DO_CNPJ = `cnpj_ordem cnpj_dv identificador_matriz_filial identificador_matriz_filial_descricao nome_fantasia
  situacao_cadastral situacao_cadastral_descricao data_situacao_cadastral motivo_situacao_cadastral
  motivo_situacao_cadastral_descricao situacao_especial data_situacao_especial data_inicio_atividade cnae_fiscal_principal
  cnae_fiscal_principal_descricao cnae_fiscal_secundaria tipo_logradouro logradouro numero complemento bairro cep municipio
  municipio_descricao uf nome_cidade_exterior pais pais_descricao ddd_1 telefone_1 ddd_2 telefone_2 ddd_fax fax
  correio_eletronico empresa_razao_social empresa_natureza_juridica empresa_natureza_juridica_descricao empresa_porte_empresa
  empresa_porte_empresa_descricao empresa_capital_social empresa_ente_federativo_responsavel empresa_qualificacao_responsavel
  empresa_qualificacao_responsavel_descricao simples_opcao_pelo_simples simples_opcao_pelo_simples_descricao
  simples_data_opcao_simples simples_data_exclusao_simples simples_opcao_pelo_mei simples_opcao_pelo_mei_descricao
  simples_data_opcao_mei simples_data_exclusao_mei`.split(/\s+/);

export const respostas = {
  cnpj: Joi.object({
    cnpj: s.required(),
    cnpj_basico: s.required(),
    tem_empresa: Joi.boolean().required(),
    tem_simples: Joi.boolean().required(),
    socios: Joi.array().items(socio).required(),
    ...anulaveis(...CAMPOS_DO_CNPJ),
  }),
  pagina: Joi.object({
    estimado: Joi.boolean().required(),
    itens: Joi.array().items(resumo).required(),
    pagina: Joi.number().integer().required(),
    tamanho: Joi.number().integer().required(),
    total: Joi.number().integer().required(),
  }),
};

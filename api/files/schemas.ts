import Joi from 'joi';
import { paginaNumerada, restricaoNoDocumento, sempre } from '../shared/openapi';
import { comoId, ehId, id, inteiroEscrito, pagina, tamanho } from '../shared/paginacao';

export const TAMANHO_PADRAO = 10;
export const TAMANHO_MAXIMO = 100;
/** An Idempotency-Key (IETF draft "The Idempotency-Key HTTP Header Field"): 1 to 255 visible ASCII characters. */
export const FORMA_DA_CHAVE = /^[\x21-\x7e]{1,255}$/;

/** The longest file name, in characters: as many as its column (VARCHAR(255), utf8mb4) holds. */
const MAIOR_NOME = 255;

/**
 * A file name is a label: any text up to MAIOR_NOME characters but control characters (it never
 * names a path). Counted once in NFC, the form it is stored in, and in characters (code points):
 * joi's max() counts UTF-16 units, two for an emoji, and refused names the column holds.
 */
const nome = () =>
  Joi.string()
    .normalize('NFC')
    .trim()
    .min(1)
    .custom((v: string, helpers) => ([...v].length > MAIOR_NOME ? helpers.error('nome.longo') : v))
    // eslint-disable-next-line no-control-regex
    .pattern(/^[^\u0000-\u001f\u007f]+$/)
    .messages({ 'string.pattern.base': 'o nome não pode ter caracteres de controle', 'nome.longo': `o nome passa de ${MAIOR_NOME} caracteres` })
    .meta(restricaoNoDocumento({ maxLength: MAIOR_NOME }))
    .description(`Nome do arquivo (até ${MAIOR_NOME} caracteres), devolvido no download; não é usado como caminho.`);

export const schemas = {
  paramsId: Joi.object({ id: id().required() }),
  enviar: Joi.object({ nome: nome().required() }),
  // read by enviarArquivo itself (chaveDeIdempotencia): documented here
  cabecalhosDoEnvio: Joi.object({
    'Idempotency-Key': Joi.string()
      .max(255)
      .pattern(FORMA_DA_CHAVE)
      .description('De 1 a 255 caracteres ASCII visíveis: o envio repetido com a mesma chave devolve o primeiro arquivo.'),
  }),
  pagina: Joi.object({ pagina: pagina(), tamanho: tamanho(TAMANHO_PADRAO, TAMANHO_MAXIMO) }),
  filtro: Joi.object({
    ids: Joi.string()
      .trim()
      .custom((v: string, helpers) => {
        const ids = [...new Set(v.split(',').map(comoId).filter(Boolean))];
        if (!ids.length || ids.length > TAMANHO_MAXIMO || !ids.every(ehId)) return helpers.error('any.invalid');
        return ids;
      })
      .messages({ 'any.invalid': `de 1 a ${TAMANHO_MAXIMO} ids separados por vírgula` })
      .description(`Ids separados por vírgula (até ${TAMANHO_MAXIMO}). Informe \`ids\` ou \`chave\`.`),
    chave: Joi.string()
      .pattern(FORMA_DA_CHAVE)
      .messages({ 'string.pattern.base': 'de 1 a 255 caracteres ASCII visíveis' })
      .description('A `Idempotency-Key` com que o arquivo foi enviado, sem aspas: devolve esse arquivo do aplicativo enquanto existir. Informe `ids` ou `chave`.'),
  })
    .xor('ids', 'chave')
    .messages({ 'object.missing': 'informe ids ou chave', 'object.xor': 'informe ids ou chave, não os dois' }),
  conteudo: Joi.object({
    expira: inteiroEscrito().min(0).required().description('Validade do link, em segundos Unix (vem na `url`).'),
    assinatura: Joi.string().max(200).required().description('HMAC do link (vem na `url`).'),
  }),
};

const arquivo = sempre({
  id: Joi.string(),
  nome: Joi.string(),
  tipo_mime: Joi.string(),
  tamanho: Joi.number().integer().description('Bytes'),
  sha256: Joi.string().description('SHA-256 dos bytes, hexadecimal'),
  criado_em: Joi.string().isoDate(),
  url: Joi.string().description('Download assinado, sem token, válido por 15 minutos'),
});

export const respostas = {
  arquivo,
  lista: Joi.array().items(arquivo),
  pagina: paginaNumerada(arquivo),
};

import { pipeline } from 'node:stream/promises';
import { NextFunction, Request, Response } from 'express';
import { config } from '../../config';
import { rotasDeAcesso } from '../shared/acesso/rotas';
import { ErroDeDominio, proibido } from '../shared/errors';
import { comoId } from '../shared/paginacao';
import { Rota } from '../shared/rotas';
import { acessoFiles } from './acesso';
import { abrirConteudo, arquivoPorId, arquivosPelaChave, arquivosPorIds, corpoGrandeDemais, deletarArquivo, enviarArquivo, listarArquivos } from './arquivos';
import { disposicaoDeAnexo } from './disposicao';
import { conferirAssinatura } from './url-assinada';
import { respostas, schemas } from './schemas';

/**
 * Before anything else, what the headers already tell (as the JSON parser does for every other
 * route): a declared size past the limit answers 413 without reading a byte. A compressed body
 * (the bytes are stored as sent) is refused with 415 once the caller is authenticated, as any
 * input (DESIGN §10): a Content-Encoding, or a transfer coding besides chunked (Node removes the
 * chunks alone, and `gzip, chunked` bytes were stored still compressed). The connection is closed
 * after these answers rather than drained, as after any answer to a body not read
 * (lib/http-server.ts, fecharSemOCorpo).
 */
function conferirCabecalhosDoCorpo(req: Request, _res: Response, next: NextFunction) {
  const codificacao = req.headers['content-encoding']?.trim().toLowerCase();
  const transferencia = req.headers['transfer-encoding']?.trim().toLowerCase();
  if ((codificacao && codificacao !== 'identity') || (transferencia && transferencia !== 'chunked')) {
    req.corpoIlegivel = new ErroDeDominio('codificacao_nao_suportada', 'Envie os bytes do arquivo sem Content-Encoding nem outra Transfer-Encoding além de chunked.');
  }
  if (Number(req.headers['content-length']) > config().files.tamanhoMaximoBytes) {
    next(corpoGrandeDemais());
    return;
  }
  next();
}

/**
 * A download link's signature stands for a token, so it is checked first, on the values as sent:
 * a link that does not hold answers 403 whatever else is wrong with it, as a refused token comes
 * before a malformed request (DESIGN §10). The id is taken as the route's schema takes it.
 */
function conferirLink(req: Request, _res: Response, next: NextFunction) {
  const { expira, assinatura } = req.query;
  try {
    if (typeof expira !== 'string' || !/^\d{1,15}$/.test(expira) || typeof assinatura !== 'string') {
      throw proibido('Link de download sem validade ou assinatura.');
    }
    conferirAssinatura(comoId(String(req.params.id)), Number(expira), assinatura);
    next();
  } catch (err) {
    next(err);
  }
}

const DESCRICAO_DO_ENVIO = `O corpo são os bytes do arquivo, sem JSON nem multipart; \`Content-Type\` é o tipo MIME \
guardado e devolvido no download (ausente: application/octet-stream). Acima de FILES_TAMANHO_MAXIMO_MB (padrão 25) \
responde 413 e nada fica guardado. Só tokens de aplicativo; cada aplicativo vê apenas os seus arquivos. Com \`Idempotency-Key\` (1 a 255 caracteres ASCII visíveis), um envio repetido com a mesma chave, enquanto o arquivo existir, devolve o primeiro arquivo (\`Idempotent-Replayed: true\`) em vez de guardar outro; a mesma chave com outros bytes, nome ou tipo responde 422.`;

const DESCRICAO_DO_DOWNLOAD = `Público: a assinatura faz as vezes do token. Use a \`url\` devolvida pelas outras rotas, \
válida por 15 minutos; expirada ou alterada responde 403. Devolve os bytes com o \`Content-Type\` do envio, \
\`Content-Disposition: attachment\`, \`Repr-Digest\` (SHA-256) e \`Cache-Control: private, no-store\` (nenhum cache guarda os bytes: \
um arquivo apagado não fica no navegador).`;

/** File storage routes (DESIGN §7): an application's own files under /arquivo. */
export function rotasDeFiles(): Rota[] {
  return [
    {
      metodo: 'post',
      caminho: '/arquivo',
      operacao: 'criar_arquivo',
      resumo: 'Envia um arquivo (corpo binário) e devolve seus dados com um link de download',
      descricao: DESCRICAO_DO_ENVIO,
      acesso: 'aplicativo',
      antes: [conferirCabecalhosDoCorpo],
      corpoEmFluxo: true,
      validar: { query: schemas.enviar },
      cabecalhos: schemas.cabecalhosDoEnvio,
      status: 201,
      resposta: respostas.arquivo,
      outrasRespostas: {
        '413': 'Arquivo maior que o limite',
        '409': 'Envios e exclusões simultâneos com a mesma Idempotency-Key; tente de novo',
        '415': 'Content-Encoding diferente de identity, ou Transfer-Encoding além de chunked',
        '422': 'Idempotency-Key já usada para outro arquivo',
      },
      tratar: async (req, res) => {
        // a refused body is not read to its end: the server closes the connection after the answer
        const { arquivo, repetido } = await enviarArquivo(req.principal!.sub, {
          nome: req.entrada.query.nome,
          tipoMime: req.headers['content-type'],
          corpo: req,
          chave: req.headers['idempotency-key'] as string | undefined,
        });
        if (repetido) res.setHeader('Idempotent-Replayed', 'true');
        return arquivo;
      },
    },
    {
      metodo: 'get',
      caminho: '/arquivo',
      operacao: 'buscar_paginador_arquivo',
      resumo: 'Arquivos do aplicativo, do mais recente ao mais antigo',
      acesso: 'aplicativo',
      validar: { query: schemas.pagina },
      resposta: respostas.pagina,
      tratar: (req) => listarArquivos(req.principal!.sub, req.entrada.query.pagina, req.entrada.query.tamanho),
    },
    {
      metodo: 'get',
      caminho: '/arquivo/filtro',
      operacao: 'buscar_pelo_filtro_arquivo',
      resumo: 'Arquivos do aplicativo entre os ids pedidos, ou o enviado com uma Idempotency-Key, cada um com um link de download novo',
      descricao: `Com \`ids\`: para quem guarda muitos ids (anexos de mensagens) e precisa de links de todos numa chamada. \
Com \`chave\`: o arquivo do aplicativo enviado com essa \`Idempotency-Key\` (lista de um, ou vazia), para quem perdeu a resposta do envio \
e quer achá-lo (para usá-lo ou apagá-lo) sem enviar os bytes de novo. Um dos dois, nunca ambos (400).`,
      acesso: 'aplicativo',
      validar: { query: schemas.filtro },
      resposta: respostas.lista,
      tratar: (req) =>
        req.entrada.query.chave !== undefined
          ? arquivosPelaChave(req.principal!.sub, req.entrada.query.chave)
          : arquivosPorIds(req.principal!.sub, req.entrada.query.ids),
    },
    {
      metodo: 'get',
      caminho: '/arquivo/:id',
      operacao: 'buscar_pelo_id_arquivo',
      resumo: 'Dados de um arquivo do aplicativo, com um link de download novo',
      acesso: 'aplicativo',
      validar: { params: schemas.paramsId },
      resposta: respostas.arquivo,
      tratar: (req) => arquivoPorId(req.principal!.sub, req.entrada.params.id),
    },
    {
      metodo: 'delete',
      caminho: '/arquivo/:id',
      operacao: 'deletar_pelo_id_arquivo',
      resumo: 'Apaga um arquivo do aplicativo: os bytes se vão, o registro fica marcado deletado_em',
      acesso: 'aplicativo',
      validar: { params: schemas.paramsId },
      status: 204,
      tratar: async (req) => {
        await deletarArquivo(req.principal!.sub, req.entrada.params.id);
      },
    },
    {
      metodo: 'get',
      caminho: '/arquivo/:id/conteudo',
      operacao: 'baixar_conteudo_arquivo',
      resumo: 'Bytes do arquivo, por link assinado (sem token)',
      descricao: DESCRICAO_DO_DOWNLOAD,
      acesso: 'publico',
      antes: [conferirLink],
      validar: { params: schemas.paramsId, query: schemas.conteudo },
      outrasRespostas: { '403': 'Link sem assinatura válida, vencido, ou sem `expira` ou `assinatura` bem formados' },
      respostaBinaria: true,
      // a client reads the size, type and digest before the bytes
      documentarHead: true,
      tratar: async (req, res) => {
        const c = await abrirConteudo(req.entrada.params.id);
        res.writeHead(200, {
          'Content-Type': c.tipo_mime,
          'Content-Length': String(c.tamanho),
          'Content-Disposition': disposicaoDeAnexo(c.nome),
          // a file may be deleted while its link is still valid: no cache, the browser's included,
          // keeps its bytes (docs/files.md, Decisions)
          'Cache-Control': 'private, no-store',
          'Repr-Digest': `sha-256=:${Buffer.from(c.sha256, 'hex').toString('base64')}:`,
          // whatever the type, a browser neither guesses another one nor runs it as a page of this origin
          'X-Content-Type-Options': 'nosniff',
          'Content-Security-Policy': "default-src 'none'; sandbox",
        });
        // HEAD: the headers alone; piped, the whole file would be read for nothing
        if (req.method === 'HEAD') {
          c.bytes.destroy();
          res.end();
          return;
        }
        await pipeline(c.bytes, res);
      },
    },
    ...rotasDeAcesso(acessoFiles),
  ];
}

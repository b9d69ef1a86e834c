import { config } from '../../config';
import { MIGRACOES_FILES, MODELOS_FILES } from '../../models/files';
import { criarApp } from '../shared/app';
import { autenticadorRemoto } from '../shared/auth';
import { prontidao, Servico } from '../shared/servico';
import { acessoFiles } from './acesso';
import { armazenamento } from './armazenamento';
import { armazenamentoAindaConferido, conferirMarcaDoArmazenamento } from './marca';
import { rotasDeFiles } from './routes';
import { carregarSegredo } from './url-assinada';

export const files: Servico = {
  nome: 'files',
  modelos: MODELOS_FILES,
  migracoes: MIGRACOES_FILES,
  preparar: async () => {
    await acessoFiles.preparar();
    await carregarSegredo();
    await armazenamento().preparar();
    await conferirMarcaDoArmazenamento();
  },
  // uploads of up to FILES_TAMANHO_MAXIMO_MB: a client slower than about 85 KB/s took more than
  // Node's 5 minutes for 25 MiB
  prazoDaRequisicaoMs: () => config().files.prazoDoEnvioMs,
  app: () =>
    criarApp({
      nome: 'files',
      info: {
        title: 'File storage',
        version: '0.1.0',
        description: 'Arquivos de aplicativos: envio, lista, download por link assinado e remoção.',
      },
      rotas: rotasDeFiles(),
      autenticar: autenticadorRemoto(),
      pronto: async () => {
        await prontidao('files');
        await armazenamento().pronto();
        // the store this process started with, not a folder left where its volume was
        await armazenamentoAindaConferido();
      },
    }),
};

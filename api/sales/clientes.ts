import { Cliente } from '../../models/sales';
import { criarCadastro } from './cadastros';

/** Customers a conversation links to (SPEC 4.6 rule 6 `cliente_id`; the `contato` filter reads `razao_social`). */
export const clientes = criarCadastro({
  modelo: Cliente,
  oQue: 'Cliente',
  colunaDoNome: 'razao_social',
  colunasDaBusca: ['razao_social', 'cnpj'],
  colunasAscii: ['cnpj'],
  campos: ['razao_social', 'cnpj', 'telefone', 'email'],
});

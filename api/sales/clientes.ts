import { Cliente } from '../../models/sales';
import { criarCadastro } from './cadastros';

/** Customers a conversation links to (SPEC 4.6 rule 6 `cliente_id`; the `contato` filter reads `razao_social`). */
export const clientes = criarCadastro({
  modelo: Cliente,
  oQue: 'Cliente',
  colunaDoNome: 'razao_social',
  colunasDaBusca: ['razao_social', 'cnpj'],
  // stored upper case and without its mask (schemas.ts): `12abc` and `11.222.333` find it too
  formaDaBusca: { cnpj: (busca) => (/^[0-9A-Za-z.\/\-\s]+$/.test(busca) ? busca.replace(/[.\/\-\s]/g, '').toUpperCase() || null : null) },
  campos: ['razao_social', 'cnpj', 'telefone', 'email'],
});

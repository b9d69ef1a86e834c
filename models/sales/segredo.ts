import { Table } from 'sequelize-typescript';
import { SegredoBase, tabelaDeSegredo } from '../shared/segredo';

/**
 * The key that encrypts configured systems' secrets, in LOCALHOST only (SALES_CHAVE_DE_CIFRA
 * elsewhere), and everywhere a mark derived from it, which tells a process given another key.
 */
@Table(tabelaDeSegredo('segredo'))
export class Segredo extends SegredoBase {}

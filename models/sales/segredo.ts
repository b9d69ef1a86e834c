import { Table } from 'sequelize-typescript';
import { SegredoBase, tabelaDeSegredo } from '../shared/segredo';

/** LOCALHOST only: the key that encrypts configured systems' secrets (SALES_CHAVE_DE_CIFRA elsewhere). */
@Table(tabelaDeSegredo('segredo'))
export class Segredo extends SegredoBase {}

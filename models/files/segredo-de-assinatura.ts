import { Table } from 'sequelize-typescript';
import { SegredoBase, tabelaDeSegredo } from '../shared/segredo';

/** LOCALHOST only: the HMAC key of the signed download URLs (FILES_SEGREDO_DE_ASSINATURA elsewhere). */
@Table(tabelaDeSegredo('segredo_de_assinatura'))
export class SegredoDeAssinatura extends SegredoBase {}

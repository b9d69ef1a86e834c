import { Table } from 'sequelize-typescript';
import { tabela } from '../shared/base';
import { PerfilAcessoBase } from '../shared/perfil-acesso';

@Table(tabela('perfil_acesso', { paranoid: true }))
export class PerfilAcesso extends PerfilAcessoBase {}

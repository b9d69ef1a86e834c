import { Migracao } from '../../lib/database';
import { NOMES_UNICOS, TABELA } from './sql';

/** Tables of the access module, the same in every service that mounts it (DESIGN §3). */
export const migracaoDeAcesso: Migracao = {
  name: '0001-acesso',
  async up(qi) {
    const q = (sql: string) => qi.sequelize.query(sql);
    await q(`CREATE TABLE perfil_acesso (
      id CHAR(36) NOT NULL PRIMARY KEY,
      nome VARCHAR(120) NOT NULL,
      descricao VARCHAR(500) NULL,
      permissoes TEXT NOT NULL,
      sistema BOOLEAN NOT NULL DEFAULT FALSE,
      criado_em DATETIME(3) NOT NULL,
      atualizado_em DATETIME(3) NOT NULL,
      deletado_em DATETIME(3) NULL,
      nome_unico VARCHAR(120) GENERATED ALWAYS AS (IF(deletado_em IS NULL, nome, NULL)) STORED,
      UNIQUE KEY perfil_acesso_nome_unico (nome_unico),
      KEY perfil_acesso_nome (nome, id)
    ) ${TABELA}`);
    await q(`CREATE TABLE colaborador (
      id CHAR(36) NOT NULL PRIMARY KEY,
      auth_id VARCHAR(64) NOT NULL,
      nome VARCHAR(200) NOT NULL,
      email VARCHAR(254) NOT NULL,
      ativo BOOLEAN NOT NULL DEFAULT TRUE,
      master BOOLEAN NOT NULL DEFAULT FALSE,
      cargo VARCHAR(200) NULL,
      funcao VARCHAR(200) NULL,
      setor VARCHAR(200) NULL,
      telefone VARCHAR(40) NULL,
      perfil_acesso_id CHAR(36) NULL,
      criado_em DATETIME(3) NOT NULL,
      atualizado_em DATETIME(3) NOT NULL,
      deletado_em DATETIME(3) NULL,
      UNIQUE KEY colaborador_auth_id (auth_id),
      KEY colaborador_nome (deletado_em, nome, id),
      KEY colaborador_email (email),
      CONSTRAINT colaborador_perfil FOREIGN KEY (perfil_acesso_id) REFERENCES perfil_acesso (id)
    ) ${TABELA}`);
  },
};

/** Profile names told apart by their emoji too (NOMES_UNICOS); run again, it changes nothing. */
export const migracaoDosNomesDePerfil: Migracao = {
  name: '0002-acesso-nomes-distintos-por-emoji',
  async up(qi) {
    await qi.sequelize.query(`ALTER TABLE perfil_acesso
      MODIFY nome VARCHAR(120) ${NOMES_UNICOS} NOT NULL,
      MODIFY nome_unico VARCHAR(120) ${NOMES_UNICOS} GENERATED ALWAYS AS (IF(deletado_em IS NULL, nome, NULL)) STORED`);
  },
};

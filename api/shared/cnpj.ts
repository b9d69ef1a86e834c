import Joi from 'joi';
import { dadosInvalidos } from './errors';

/**
 * A CNPJ as written by a person: with or without the mask `NN.NNN.NNN/NNNN-NN`. Since July 2026 the
 * Receita also issues alphanumeric CNPJs (IN RFB 2.229/2024): the first 12 characters may be 0-9 or
 * A-Z, each worth its ASCII code minus 48, with the same mod-11 weights; the two check digits stay
 * numeric. Answers the 14 characters, upper case, or throws a 400 naming what is wrong (fourteen
 * zeros too, which the check digits let through).
 */
export function normalizarCnpj(entrada: string): string {
  const cnpj = semMascara(entrada);
  const problema = problemaDoCnpj(cnpj);
  if (problema) throw dadosInvalidos(problema);
  return cnpj;
}

/** A CNPJ field of a body, read as normalizarCnpj reads it: the 14 characters, or a 400 naming what is wrong. */
export const cnpjNoCorpo = () =>
  Joi.string()
    .trim()
    .custom((v: string, h) => {
      const cnpj = semMascara(v);
      const problema = problemaDoCnpj(cnpj);
      return problema ? h.message({ custom: problema }) : cnpj;
    });

// only a-z are upper-cased: Unicode would turn some other letters into ASCII ones (ſ → S, ﬀ → FF)
const semMascara = (entrada: string) => entrada.replace(/[.\/\-\s]/g, '').replace(/[a-z]/g, (c) => c.toUpperCase());

/** What is wrong with a CNPJ without its mask, or null. */
function problemaDoCnpj(cnpj: string): string | null {
  if (cnpj.length !== 14) return `O CNPJ deve ter 14 caracteres sem a máscara; recebidos ${cnpj.length}.`;
  if (!/^[0-9A-Z]{12}[0-9]{2}$/.test(cnpj)) {
    return 'O CNPJ aceita algarismos (ou letras de A a Z nas 12 primeiras posições) e a máscara NN.NNN.NNN/NNNN-NN.';
  }
  if (cnpj.slice(12) !== digitosVerificadores(cnpj.slice(0, 12))) return 'Dígitos verificadores do CNPJ inválidos.';
  // of the fourteen repeated characters, zeros alone pass the check digits; no CNPJ is that
  if (cnpj === '00000000000000') return 'CNPJ inválido: todos os caracteres são zero.';
  return null;
}

/** The two check digits of the first 12 characters (mod 11, weights 2..9 from the right). */
export function digitosVerificadores(base: string): string {
  const digito = (s: string) => {
    let soma = 0;
    for (let i = 0; i < s.length; i++) soma += (s.charCodeAt(s.length - 1 - i) - 48) * (2 + (i % 8));
    const resto = soma % 11;
    return resto < 2 ? 0 : 11 - resto;
  };
  const primeiro = digito(base);
  return `${primeiro}${digito(base + primeiro)}`;
}

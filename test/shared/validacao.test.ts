import Joi from 'joi';
import { ErroDeDominio } from '../../api/shared/errors';
import { ERROS_LISTADOS, esquemaPronto, validarCom } from '../../api/shared/validacao';

/**
 * A body's errors (api/shared/validacao.ts): every field at fault is listed once, and an answer
 * lists at most ERROS_LISTADOS of them, however many the body holds.
 */

const esquema = esquemaPronto(Joi.object({ email: Joi.string().email().required(), itens: Joi.array().items(Joi.number().min(1)) }));

const errosDe = (valor: unknown): ErroDeDominio => {
  try {
    validarCom(esquema, valor, 'Dados inválidos.');
  } catch (err) {
    return err as ErroDeDominio;
  }
  throw new Error('accepted');
};

test('each field at fault is listed, each once, under the route\'s message', () => {
  const err = errosDe({ email: 'não', itens: [0, 2, 'x'], sobra: 1 });
  expect(err.tipo).toBe('dados_invalidos');
  expect(err.message).toBe('Dados inválidos.');
  expect(err.erros?.map((e) => e.campo)).toEqual(['email', 'itens.0', 'itens.2', 'sobra']);
});

test('a body of 100,000 unknown keys gets the first ERROS_LISTADOS, the count in the message, and costs about what joi does', () => {
  const corpo: Record<string, unknown> = { email: 'a@exemplo.com' };
  for (let i = 0; i < 100_000; i++) corpo[`k${i}`] = 0;
  // joi alone, measured in the same run (the machine's load weighs on both alike): about 0.3 s on
  // a quiet one; comparing each error with every other took 20 times as long (6 s)
  let inicio = performance.now();
  esquema.validate(corpo);
  const doJoi = performance.now() - inicio;
  inicio = performance.now();
  const err = errosDe(corpo);
  expect(performance.now() - inicio).toBeLessThan(5 * doJoi + 500);
  expect(err.erros).toHaveLength(ERROS_LISTADOS);
  expect(err.erros?.[0]).toEqual({ campo: 'k0', mensagem: expect.any(String) });
  expect(err.message).toBe(`Dados inválidos. (100000 erros; os primeiros ${ERROS_LISTADOS} abaixo)`);
});

test('two rules of a field that say the same thing are listed once', () => {
  const duasRegras = esquemaPronto(Joi.object({ codigo: Joi.string().pattern(/^[a-z]+$/).pattern(/^.{3}$/) }));
  let erros;
  try {
    validarCom(duasRegras, { codigo: '12' }, 'Dados inválidos.');
  } catch (err) {
    erros = (err as ErroDeDominio).erros;
  }
  expect(erros).toEqual([{ campo: 'codigo', mensagem: 'codigo não está no formato esperado' }]);
});

test('past ERROS_LISTADOS errors of one array, the first are listed and the message counts them all', () => {
  const err = errosDe({ email: 'a@exemplo.com', itens: Array(150).fill(0) });
  expect(err.erros?.map((e) => e.campo)).toEqual(Array.from({ length: ERROS_LISTADOS }, (_, i) => `itens.${i}`));
  expect(err.message).toBe(`Dados inválidos. (150 erros; os primeiros ${ERROS_LISTADOS} abaixo)`);
});

/** A logger call a test looks at: its level and its arguments (object, message). */
export interface Registro {
  nivel: string;
  args: unknown[];
}

type Nivel = 'error' | 'warn' | 'info' | 'debug';

/**
 * The module of lib/logger, with the loggers of `componentes` (one or several) also writing their calls at `niveis`
 * into `destino()` (the tests' log level is silent: the calls are what counts). For jest.mock,
 * whose factory runs before the test file's own variables exist: hence the getter.
 *
 *   const mockRegistros: Registro[] = [];
 *   jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('files', ['error'], () => mockRegistros));
 */
export function loggerQueRegistra(componentes: string | string[], niveis: Nivel[], destino: () => Registro[]) {
  const real = jest.requireActual('../../lib/logger');
  return {
    ...real,
    logger: (c?: string) => {
      const l = real.logger(c);
      if (c !== undefined && [componentes].flat().includes(c)) {
        for (const nivel of niveis) {
          const original = l[nivel].bind(l);
          l[nivel] = (...args: unknown[]) => (destino().push({ nivel, args }), original(...args));
        }
      }
      return l;
    },
  };
}

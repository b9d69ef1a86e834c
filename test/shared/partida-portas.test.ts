import { config, ConfigError } from '../../config';
import { encerrar } from '../../lib/lifecycle';
import * as redisDaSuite from '../../lib/redis';
import { iniciarTudo } from '../../lib/runner';

afterAll(() => encerrar());

test('`suite start` with two parts set to one port stops before opening anything, naming them and the port', async () => {
  const c = config();
  const antes = { leads: c.servicos.leads.porta, dashboard: c.dashboard.porta };
  c.servicos.leads.porta = c.servicos.identity.porta;
  c.dashboard.porta = c.servicos.hub.porta;
  const espera = jest.spyOn(redisDaSuite, 'esperarRedis');
  try {
    const erro = await iniciarTudo().catch((e: unknown) => e);
    expect(erro).toBeInstanceOf(ConfigError);
    expect((erro as Error).message).toBe(
      `one port for more than one part of \`suite start\`: identity and leads on ${c.servicos.identity.porta}; hub and dashboard on ${c.servicos.hub.porta}`,
    );
    expect(espera).not.toHaveBeenCalled();
  } finally {
    espera.mockRestore();
    c.servicos.leads.porta = antes.leads;
    c.dashboard.porta = antes.dashboard;
  }
});

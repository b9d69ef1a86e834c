/** The suite's services, their default LOCALHOST ports (DESIGN §1) and the env prefix of each. */
export const SERVICOS = {
  identity: { porta: 4001, env: 'IDENTITY' },
  leads: { porta: 4002, env: 'LEADS' },
  hub: { porta: 4003, env: 'HUB' },
  intranet: { porta: 4004, env: 'INTRANET' },
  sales: { porta: 4005, env: 'SALES' },
  ai: { porta: 4006, env: 'AI' },
  tracing: { porta: 4007, env: 'TRACING' },
  files: { porta: 4008, env: 'FILES' },
} as const;

export type NomeDoServico = keyof typeof SERVICOS;
export const NOMES_DOS_SERVICOS = Object.keys(SERVICOS) as NomeDoServico[];

/** Suite services that call others with an application token of their own (DESIGN §3). */
export const APLICATIVOS_DA_SUITE: NomeDoServico[] = ['hub', 'identity', 'intranet', 'sales', 'tracing'];

export const PORTA_DO_DASHBOARD = 4100;

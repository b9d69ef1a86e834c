/**
 * Runs at most `n` of the tasks given at a time, in the order they ask; urgent ones skip the queue.
 * With `lotacao`, past `naEspera` tasks waiting a new one is refused at once (`recusa()`) instead
 * of queued.
 */
export function limiteDeConcorrencia(n: number, lotacao?: { naEspera: number; recusa: () => Error }) {
  let ativas = 0;
  const fila: (() => void)[] = [];
  return async <T>(tarefa: () => Promise<T>, urgente = false): Promise<T> => {
    if (ativas < n) ativas++;
    else if (lotacao && fila.length >= lotacao.naEspera) throw lotacao.recusa();
    else await new Promise<void>((vaga) => (urgente ? fila.unshift(vaga) : fila.push(vaga))); // a finishing task hands its slot over
    try {
      return await tarefa();
    } finally {
      const proxima = fila.shift();
      if (proxima) proxima();
      else ativas--;
    }
  };
}

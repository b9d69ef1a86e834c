import { Principal } from './principal';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id?: string;
      principal?: Principal;
      /** the JSON body's bytes as received, when the service keeps them (DefinicaoDoServico.guardarCorpoBruto) */
      corpoBruto?: Buffer;
      /** the parser's error for a body that is not JSON, raised once the caller is authenticated */
      corpoIlegivel?: Error;
      /** the route's `WWW-Authenticate` challenge for a 401, when not `Bearer` (Rota.tokenNaQuery) */
      desafio?: string;
      /** params, query and body after joi validation and conversion */
      entrada: { params: any; query: any; body: any };
    }
  }
}

export {};

/** Who is calling, read from a verified identity token (DESIGN §3 claims). */
export interface Principal {
  sub: string;
  tipo: 'usuario' | 'aplicativo';
  master: boolean;
  nome: string;
  email?: string;
  /** a user's `perfil` in identity when the token was issued (absent from older tokens) */
  perfil?: 'colaborador' | 'cliente';
  /** when the token was issued (its `iat`, seconds since the epoch) */
  emitidoEm: number;
  /** the raw bearer token, for calls made on the caller's behalf (SPEC 5.7) */
  token: string;
}

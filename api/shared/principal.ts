/** Who is calling, read from a verified identity token (DESIGN §3 claims). */
export interface Principal {
  sub: string;
  tipo: 'usuario' | 'aplicativo';
  master: boolean;
  nome: string;
  email?: string;
  /** the raw bearer token, for calls made on the caller's behalf (SPEC 5.7) */
  token: string;
}

/** Phone numbers as the chat platform (`+55 11 99999-0000`) and the gateway (`5511999990000@s.whatsapp.net`) write them. */

export const digitos = (valor: string | null | undefined): string => (valor ?? '').replace(/\D+/g, '');

/**
 * The key that identifies a phone across both systems: its digits, and for a Brazilian mobile
 * (55, two-digit area code, 9 and eight digits) without that ninth digit, since WhatsApp ids of
 * older numbers omit it while the chat platform keeps it. Only the eight digits of an old mobile
 * count (they began with 6 to 9): those beginning with 2 to 5 are a landline's, so `55 11 3333-4444`
 * and `55 11 9 3333-4444` stay two phones.
 */
export function chaveDoTelefone(valor: string | null | undefined): string {
  const d = digitos(valor);
  return /^55\d{2}9[6-9]\d{7}$/.test(d) ? d.slice(0, 4) + d.slice(5) : d;
}

/** The digit strings a stored phone may have for this key: an old mobile's with and without the ninth digit. */
export function variantesDoTelefone(chave: string): string[] {
  return /^55\d{2}[6-9]\d{7}$/.test(chave) ? [chave, `${chave.slice(0, 4)}9${chave.slice(4)}`] : [chave];
}

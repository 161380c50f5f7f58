/** An OpenID Connect identity (issuer and subject) and the account it signs in to. */
export interface OidcIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: number;
  created_at: number;
}

export interface OidcIdentitiesSchema {
  oidc_identities: OidcIdentitiesTable;
}

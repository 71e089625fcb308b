//! Authentication and tenants (docs/server.md, *Authentication*): a JWT bearer token carries
//! `sub` and `tenant_id`; the tenant scopes every query. Without a configured key every
//! request runs as the dev tenant — `serve` allows that only on a loopback address.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use crate::AppState;
use crate::error::ApiError;

/// The tenant of the dev mode (no key configured, loopback only).
pub const DEV_TENANT: &str = "dev-tenant";

/// How tokens are verified.
#[derive(Clone)]
pub enum Auth {
    /// No key: every request is the dev tenant.
    Dev,
    Jwt {
        key: DecodingKey,
        validation: Box<Validation>,
    },
}

impl std::fmt::Debug for Auth {
    // Never prints key material.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::Dev => f.write_str("Auth::Dev"),
            Auth::Jwt { validation, .. } => write!(f, "Auth::Jwt({:?})", validation.algorithms),
        }
    }
}

/// Key material from configuration.
#[derive(Clone, Default)]
pub struct AuthConfig {
    /// HS256 shared secret.
    pub hs256_secret: Option<String>,
    /// RS256 or EdDSA public key (PEM); the algorithm follows the key.
    pub public_key_pem: Option<String>,
    /// Required `iss`, when set: a token must carry it (a token without `iss` is refused).
    pub issuer: Option<String>,
    /// Required `aud`, when set: a token must carry it.
    pub audience: Option<String>,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field(
                "hs256_secret",
                &self.hs256_secret.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "public_key_pem",
                &self.public_key_pem.as_ref().map(|_| "<pem>"),
            )
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish()
    }
}

impl AuthConfig {
    pub fn is_configured(&self) -> bool {
        self.hs256_secret.is_some() || self.public_key_pem.is_some()
    }

    /// The verifier; an error names what is wrong with the key (never its content).
    pub fn build(&self) -> anyhow::Result<Auth> {
        let (key, alg) = if let Some(pem) = &self.public_key_pem {
            let pem = pem.as_bytes();
            if let Ok(k) = DecodingKey::from_rsa_pem(pem) {
                (k, Algorithm::RS256)
            } else if let Ok(k) = DecodingKey::from_ed_pem(pem) {
                (k, Algorithm::EdDSA)
            } else {
                anyhow::bail!("the server's public key is neither an RSA nor an Ed25519 PEM key");
            }
        } else if let Some(secret) = &self.hs256_secret {
            if secret.len() < 32 {
                anyhow::bail!("the HS256 secret must be at least 32 bytes long");
            }
            (
                DecodingKey::from_secret(secret.as_bytes()),
                Algorithm::HS256,
            )
        } else {
            return Ok(Auth::Dev);
        };
        let mut validation = Validation::new(alg);
        // A configured issuer or audience is a requirement, not a check of a claim the token
        // may leave out; `nbf` is checked with the same leeway as `exp`.
        let mut required = vec!["exp", "sub"];
        if let Some(iss) = &self.issuer {
            validation.set_issuer(&[iss]);
            required.push("iss");
        }
        if let Some(aud) = &self.audience {
            validation.set_audience(&[aud]);
            required.push("aud");
        }
        validation.set_required_spec_claims(&required);
        validation.validate_nbf = true;
        Ok(Auth::Jwt {
            key,
            validation: Box::new(validation),
        })
    }
}

#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    tenant_id: Option<String>,
    exp: Option<u64>,
}

/// The authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant {
    pub tenant_id: String,
    pub subject: String,
    /// When the caller's token stops being accepted (its `exp` plus the leeway, Unix seconds);
    /// `None` without an expiry (the dev tenant, a schedule's own starts). A stream opened with
    /// the token ends then (docs/server.md, *Authentication and tenants*).
    pub valid_until: Option<u64>,
}

impl Auth {
    /// Resolves the tenant of a request from its `Authorization` header.
    pub fn resolve(&self, authorization: Option<&str>) -> Result<Tenant, ApiError> {
        match self {
            Auth::Dev => Ok(Tenant {
                tenant_id: DEV_TENANT.into(),
                subject: "dev".into(),
                valid_until: None,
            }),
            Auth::Jwt { key, validation } => {
                // The scheme is case-insensitive (RFC 7235).
                let token = authorization
                    .and_then(|h| {
                        let (scheme, rest) = h.split_once(' ')?;
                        scheme.eq_ignore_ascii_case("bearer").then_some(rest)
                    })
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| ApiError::unauthorized("Authentication required"))?;
                let data = jsonwebtoken::decode::<Claims>(token, key, validation)
                    .map_err(|e| ApiError::unauthorized(format!("invalid token: {e}")))?;
                let sub = data.claims.sub.filter(|s| !s.trim().is_empty());
                // A tenant id follows the id rule, like every other id it scopes (and like the
                // MCP gateway's client ids), so no tenant can exist that some route refuses.
                let tenant = data
                    .claims
                    .tenant_id
                    .filter(|t| crate::validate::valid_id(t));
                match (sub, tenant) {
                    (Some(subject), Some(tenant_id)) => Ok(Tenant {
                        tenant_id,
                        subject,
                        valid_until: data
                            .claims
                            .exp
                            .map(|exp| exp.saturating_add(validation.leeway)),
                    }),
                    _ => Err(ApiError::new(
                        axum::http::StatusCode::FORBIDDEN,
                        "Access denied",
                    )),
                }
            }
        }
    }
}

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Tenant, ApiError> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        state.auth.resolve(header)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::{Value, json};

    const SECRET: &str = "a-test-secret-of-at-least-32-bytes!";

    fn now() -> i64 {
        jsonwebtoken::get_current_timestamp() as i64
    }

    fn token(claims: Value) -> String {
        let header = jsonwebtoken::Header::new(Algorithm::HS256);
        let key = jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes());
        format!(
            "Bearer {}",
            jsonwebtoken::encode(&header, &claims, &key).unwrap()
        )
    }

    fn auth(issuer: Option<&str>, audience: Option<&str>) -> Auth {
        AuthConfig {
            hs256_secret: Some(SECRET.into()),
            issuer: issuer.map(str::to_string),
            audience: audience.map(str::to_string),
            ..Default::default()
        }
        .build()
        .unwrap()
    }

    fn status(auth: &Auth, header: &str) -> u16 {
        match auth.resolve(Some(header)) {
            Ok(_) => 200,
            Err(e) => e.status.as_u16(),
        }
    }

    fn base() -> Value {
        json!({"sub": "ana", "tenant_id": "acme", "exp": now() + 600})
    }

    #[test]
    fn a_configured_issuer_is_required() {
        let auth = auth(Some("https://idp.example"), None);
        assert_eq!(status(&auth, &token(base())), 401, "no iss");
        let mut wrong = base();
        wrong["iss"] = json!("https://other.example");
        assert_eq!(status(&auth, &token(wrong)), 401);
        let mut right = base();
        right["iss"] = json!("https://idp.example");
        assert_eq!(status(&auth, &token(right)), 200);
    }

    #[test]
    fn nbf_is_checked_with_the_leeway_of_exp() {
        let auth = auth(None, None);
        let mut future = base();
        future["nbf"] = json!(now() + 86_400);
        assert_eq!(status(&auth, &token(future)), 401);
        let mut within_leeway = base();
        within_leeway["nbf"] = json!(now() + 30);
        assert_eq!(status(&auth, &token(within_leeway)), 200);
        let mut past = base();
        past["nbf"] = json!(now() - 10);
        assert_eq!(status(&auth, &token(past)), 200);
    }

    #[test]
    fn a_configured_audience_is_required() {
        let auth = auth(None, Some("hensu-api"));
        assert_eq!(status(&auth, &token(base())), 401, "no aud");
        let mut wrong = base();
        wrong["aud"] = json!("billing");
        assert_eq!(status(&auth, &token(wrong)), 401);
        let mut right = base();
        right["aud"] = json!("hensu-api");
        assert_eq!(status(&auth, &token(right)), 200);
    }

    #[test]
    fn the_tenant_id_follows_the_id_rule() {
        let auth = auth(None, None);
        for bad in ["acme corp", "", " ", "../x", "-lead", "a/b"] {
            let mut claims = base();
            claims["tenant_id"] = json!(bad);
            assert_eq!(status(&auth, &token(claims)), 403, "{bad:?}");
        }
        let mut fine = base();
        fine["tenant_id"] = json!("acme.eu-1_b");
        assert_eq!(status(&auth, &token(fine)), 200);
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        let auth = auth(None, None);
        let header = token(base());
        let jwt = header.strip_prefix("Bearer ").unwrap();
        assert_eq!(status(&auth, &format!("bearer {jwt}")), 200);
        assert_eq!(status(&auth, &format!("BEARER {jwt}")), 200);
        assert_eq!(status(&auth, &format!("Basic {jwt}")), 401);
        assert_eq!(status(&auth, jwt), 401);
    }
}

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
    /// Required `iss`, when set.
    pub issuer: Option<String>,
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
        validation.set_required_spec_claims(&["exp", "sub"]);
        if let Some(iss) = &self.issuer {
            validation.set_issuer(&[iss]);
        }
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
}

/// The authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant {
    pub tenant_id: String,
    pub subject: String,
}

impl Auth {
    /// Resolves the tenant of a request from its `Authorization` header.
    pub fn resolve(&self, authorization: Option<&str>) -> Result<Tenant, ApiError> {
        match self {
            Auth::Dev => Ok(Tenant {
                tenant_id: DEV_TENANT.into(),
                subject: "dev".into(),
            }),
            Auth::Jwt { key, validation } => {
                let token = authorization
                    .and_then(|h| h.strip_prefix("Bearer "))
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| ApiError::unauthorized("Authentication required"))?;
                let data = jsonwebtoken::decode::<Claims>(token, key, validation)
                    .map_err(|e| ApiError::unauthorized(format!("invalid token: {e}")))?;
                let sub = data.claims.sub.filter(|s| !s.trim().is_empty());
                let tenant = data.claims.tenant_id.filter(|t| !t.trim().is_empty());
                match (sub, tenant) {
                    (Some(subject), Some(tenant_id)) => Ok(Tenant { tenant_id, subject }),
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

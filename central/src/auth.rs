//! Machine authentication: short-lived JWTs (HS256) issued for a machine credential,
//! carrying the machine and its account. Only HS256 is accepted: `alg: none`, other
//! algorithms, forged signatures and expired tokens are all refused.

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use solaria_shared::MachineId;
use uuid::Uuid;

/// The claims of a machine token.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    /// The machine.
    pub sub: Uuid,
    /// Its account.
    pub acc: Uuid,
    pub iat: i64,
    pub exp: i64,
}

/// Why a token was refused.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "the token has expired; exchange the machine credential for a new one (POST /memory/token)"
    )]
    Expired,
    #[error("the token is not valid: {0}")]
    Invalid(String),
}

/// The keys tokens are signed and checked with.
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    ttl_secs: u64,
}

impl std::fmt::Debug for JwtKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtKeys")
            .field("ttl_secs", &self.ttl_secs)
            .finish_non_exhaustive()
    }
}

impl JwtKeys {
    pub fn new(secret: &str, ttl_secs: u64) -> JwtKeys {
        JwtKeys {
            encoding: EncodingKey::from_secret(secret.as_bytes()),
            decoding: DecodingKey::from_secret(secret.as_bytes()),
            ttl_secs,
        }
    }

    /// A token for `machine` of `account`, and when it expires (Unix seconds).
    pub fn issue(&self, machine: MachineId, account: Uuid) -> Result<(String, i64), TokenError> {
        let now = chrono::Utc::now().timestamp();
        let claims = Claims {
            sub: *machine.as_uuid(),
            acc: account,
            iat: now,
            exp: now + self.ttl_secs as i64,
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| TokenError::Invalid(e.to_string()))?;
        Ok((token, claims.exp))
    }

    /// Checks a token's signature, algorithm and expiry.
    pub fn verify(&self, token: &str) -> Result<Claims, TokenError> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 5;
        validation.set_required_spec_claims(&["exp", "sub"]);
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation)
            .map(|data| data.claims)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => TokenError::Expired,
                _ => TokenError::Invalid(e.to_string()),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn issued_tokens_verify_and_carry_their_claims() {
        let keys = JwtKeys::new(KEY, 60);
        let m = MachineId::new();
        let a = Uuid::now_v7();
        let (token, exp) = keys.issue(m, a).expect("issue");
        let claims = keys.verify(&token).expect("verify");
        assert_eq!((claims.sub, claims.acc, claims.exp), (*m.as_uuid(), a, exp));
    }

    #[test]
    fn forged_expired_and_unsigned_tokens_are_refused() {
        let keys = JwtKeys::new(KEY, 60);
        let other = JwtKeys::new("another-key-another-key-another-key", 60);
        let (forged, _) = other
            .issue(MachineId::new(), Uuid::now_v7())
            .expect("issue");
        assert!(matches!(keys.verify(&forged), Err(TokenError::Invalid(_))));

        let expired = JwtKeys {
            ttl_secs: 0,
            ..JwtKeys::new(KEY, 0)
        };
        let claims = Claims {
            sub: Uuid::now_v7(),
            acc: Uuid::now_v7(),
            iat: 0,
            exp: 1_000,
        };
        let old = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &expired.encoding)
            .expect("encode");
        assert!(matches!(keys.verify(&old), Err(TokenError::Expired)));

        // alg: none — a header and claims with an empty signature.
        use base64_url as b64;
        let none = format!(
            "{}.{}.",
            b64::encode(br#"{"alg":"none","typ":"JWT"}"#),
            b64::encode(
                format!(
                    r#"{{"sub":"{}","acc":"{}","iat":0,"exp":9999999999}}"#,
                    Uuid::now_v7(),
                    Uuid::now_v7()
                )
                .as_bytes()
            )
        );
        assert!(keys.verify(&none).is_err());
        assert!(keys.verify("not.a.jwt").is_err());
    }

    /// Minimal unpadded base64url for building hostile tokens by hand.
    mod base64_url {
        pub fn encode(bytes: &[u8]) -> String {
            const T: &[u8; 64] =
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            let mut out = String::new();
            for chunk in bytes.chunks(3) {
                let b = [
                    chunk[0],
                    *chunk.get(1).unwrap_or(&0),
                    *chunk.get(2).unwrap_or(&0),
                ];
                let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
                for i in 0..=chunk.len() {
                    out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
                }
            }
            out
        }
    }
}

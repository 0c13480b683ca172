//! An agent's JSON config as text: JSON with comments and trailing commas (JSONC), read
//! and edited in place so that everything the user wrote — comments, order,
//! spacing — stays byte for byte, and removing what we inserted gives back the
//! original bytes.
//!
//! Comments are blanked to spaces (newlines kept) in a copy of the same length, so
//! every offset found in the copy is an offset in the original text.

use serde_json::Value;

/// Why a text is not JSONC we can edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsoncError {
    /// A `/*` comment or a string that never ends.
    #[error("unterminated {what} starting at line {line}")]
    Unterminated {
        /// `comment` or `string`.
        what: &'static str,
        /// 1-based line.
        line: usize,
    },
    /// Not JSON once comments and trailing commas are set aside.
    #[error("{0}")]
    Syntax(String),
}

/// A parsed JSONC document: the original text, its comment-free twin and its value.
#[derive(Debug, Clone)]
pub struct Doc {
    text: String,
    clean: Vec<u8>,
    /// The document's value.
    pub value: Value,
}

/// One `"key": value` of an object, by byte offsets into the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Offset of the key's opening quote.
    pub key_start: usize,
    /// Offsets of the value: `[value_start, value_end)`.
    pub value_start: usize,
    pub value_end: usize,
    /// Offset of the comma after the value, if one follows.
    pub comma: Option<usize>,
}

impl Doc {
    /// Parses `text` (a leading BOM is kept in the text and skipped).
    pub fn parse(text: &str) -> Result<Doc, JsoncError> {
        let clean = blank_comments(text)?;
        let strict = drop_trailing_commas(&clean);
        let value = serde_json::from_slice(&strict).map_err(|e| {
            JsoncError::Syntax(format!("{e} (comments and trailing commas allowed)"))
        })?;
        Ok(Doc {
            text: text.to_owned(),
            clean,
            value,
        })
    }

    /// The text as it is.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Offset of the top-level value's first byte (an object's `{`).
    pub fn root(&self) -> Option<usize> {
        let start = if self.clean.starts_with("\u{feff}".as_bytes()) {
            3
        } else {
            0
        };
        skip_ws(&self.clean, start)
    }

    /// The members of the object whose `{` is at `open`.
    pub fn members(&self, open: usize) -> Vec<Member> {
        members(&self.clean, open).unwrap_or_default()
    }

    /// The elements of the array whose `[` is at `open`, as members without a key
    /// (`key_start` is where the element starts), so that
    /// [`Doc::without_member`] removes one as it removes a member.
    pub fn elements(&self, open: usize) -> Vec<Member> {
        elements(&self.clean, open).unwrap_or_default()
    }

    /// The text of `[start, end)`.
    pub fn slice(&self, start: usize, end: usize) -> &str {
        self.text.get(start..end).unwrap_or("")
    }

    /// The text with `insert` put at `at`.
    pub fn inserted(&self, at: usize, insert: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + insert.len());
        out.push_str(self.text.get(..at).unwrap_or(&self.text));
        out.push_str(insert);
        out.push_str(self.text.get(at..).unwrap_or(""));
        out
    }

    /// The text with `[start, end)` replaced by `with`.
    pub fn replaced(&self, start: usize, end: usize, with: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + with.len());
        out.push_str(self.text.get(..start).unwrap_or(&self.text));
        out.push_str(with);
        out.push_str(self.text.get(end..).unwrap_or(""));
        out
    }

    /// The text without member `index` of `members` (the object at `open`): the
    /// whitespace before its key, the member and the comma after it — or, for the
    /// last of several, the comma before it. The inverse of inserting
    /// `"\n  \"key\": value,"` after the `{` (or without the comma into `{}`).
    pub fn without_member(&self, members: &[Member], index: usize) -> String {
        let Some(m) = members.get(index) else {
            return self.text.clone();
        };
        let mut start = m.key_start;
        while start > 0
            && self
                .text
                .as_bytes()
                .get(start - 1)
                .is_some_and(u8::is_ascii_whitespace)
        {
            start -= 1;
        }
        let end = match m.comma {
            Some(comma) => comma + 1,
            None => {
                if let Some(prev_comma) = index
                    .checked_sub(1)
                    .and_then(|i| members.get(i))
                    .and_then(|p| p.comma)
                {
                    start = prev_comma;
                }
                m.value_end
            }
        };
        self.replaced(start, end, "")
    }
}

/// `text` with each comment replaced by spaces (newlines kept), same length.
fn blank_comments(text: &str) -> Result<Vec<u8>, JsoncError> {
    let src = text.as_bytes();
    let mut out = src.to_vec();
    let line_at = |i: usize| {
        src.get(..i)
            .map_or(1, |s| 1 + s.iter().filter(|b| **b == b'\n').count())
    };
    let mut i = 0;
    while i < src.len() {
        match (src[i], src.get(i + 1)) {
            (b'"', _) => {
                let start = i;
                i += 1;
                loop {
                    match src.get(i) {
                        None => {
                            return Err(JsoncError::Unterminated {
                                what: "string",
                                line: line_at(start),
                            });
                        }
                        Some(b'\\') => i += 2,
                        Some(b'"') => break,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
            }
            (b'/', Some(b'/')) => {
                while i < src.len() && src[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let start = i;
                let Some(len) = text.get(i + 2..).and_then(|rest| rest.find("*/")) else {
                    return Err(JsoncError::Unterminated {
                        what: "comment",
                        line: line_at(start),
                    });
                };
                let end = i + 2 + len + 2;
                for b in &mut out[i..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    Ok(out)
}

/// A copy of comment-free JSONC without the commas that close a list.
fn drop_trailing_commas(clean: &[u8]) -> Vec<u8> {
    let mut out = clean.to_vec();
    let mut i = 0;
    while i < clean.len() {
        match clean[i] {
            b'"' => i = skip_string(clean, i).unwrap_or(clean.len()),
            b',' => {
                if matches!(
                    skip_ws(clean, i + 1).and_then(|j| clean.get(j)),
                    Some(b'}' | b']')
                ) {
                    out[i] = b' ';
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

fn skip_ws(s: &[u8], mut i: usize) -> Option<usize> {
    while s.get(i)?.is_ascii_whitespace() {
        i += 1;
    }
    Some(i)
}

/// Offset just past the string whose `"` is at `i`.
fn skip_string(s: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match s.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Offset just past the value starting at `i`.
fn skip_value(s: &[u8], i: usize) -> Option<usize> {
    match s.get(i)? {
        b'"' => skip_string(s, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match s.get(j)? {
                    b'"' => {
                        j = skip_string(s, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while let Some(b) = s.get(j) {
                if b.is_ascii_whitespace() || matches!(b, b',' | b'}' | b']') {
                    break;
                }
                j += 1;
            }
            Some(j)
        }
    }
}

fn elements(s: &[u8], open: usize) -> Option<Vec<Member>> {
    if s.get(open) != Some(&b'[') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = skip_ws(s, open + 1)?;
    while s.get(i)? != &b']' {
        let value_end = skip_value(s, i)?;
        let after = skip_ws(s, value_end)?;
        let comma = (s.get(after)? == &b',').then_some(after);
        out.push(Member {
            key: String::new(),
            key_start: i,
            value_start: i,
            value_end,
            comma,
        });
        let Some(comma) = comma else {
            break;
        };
        i = skip_ws(s, comma + 1)?;
    }
    Some(out)
}

fn members(s: &[u8], open: usize) -> Option<Vec<Member>> {
    if s.get(open) != Some(&b'{') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = skip_ws(s, open + 1)?;
    while s.get(i)? == &b'"' {
        let key_start = i;
        let key_end = skip_string(s, i)?;
        let key: String = serde_json::from_slice(s.get(key_start..key_end)?).ok()?;
        i = skip_ws(s, key_end)?;
        if s.get(i)? != &b':' {
            return None;
        }
        let value_start = skip_ws(s, i + 1)?;
        let value_end = skip_value(s, value_start)?;
        i = skip_ws(s, value_end)?;
        let comma = (s.get(i)? == &b',').then_some(i);
        out.push(Member {
            key,
            key_start,
            value_start,
            value_end,
            comma,
        });
        if comma.is_none() {
            break;
        }
        i = skip_ws(s, i + 1)?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str = "// my config\n{\n  \"$schema\": \"https://opencode.ai/config.json\", // why\n  /* the model */ \"model\": \"anthropic/x\",\n  \"mcp\": { \"gh\": {\"type\": \"remote\", \"url\": \"https://x/*y*/\"}, },\n}\n";

    #[test]
    fn comments_and_trailing_commas_are_read() {
        let doc = Doc::parse(USER).expect("jsonc");
        assert_eq!(doc.value["model"], "anthropic/x");
        assert_eq!(doc.value["mcp"]["gh"]["url"], "https://x/*y*/");
        let root = doc.root().expect("root");
        let keys: Vec<String> = doc.members(root).into_iter().map(|m| m.key).collect();
        assert_eq!(keys, ["$schema", "model", "mcp"]);
    }

    #[test]
    fn removing_an_inserted_member_gives_back_the_bytes() {
        for original in [
            USER,
            "{}",
            "{\"a\": 1}",
            "{\n  \"a\": [1, {\"b\": \"}\"}]\n}\n",
        ] {
            let doc = Doc::parse(original).expect("jsonc");
            let root = doc.root().expect("root");
            let sep = if doc.members(root).is_empty() {
                ""
            } else {
                ","
            };
            let edited = doc.inserted(root + 1, &format!("\n  \"mine\": {{\"x\": 1}}{sep}"));
            let doc = Doc::parse(&edited).expect("still jsonc");
            assert_eq!(doc.value["mine"]["x"], 1);
            let members = doc.members(root);
            let i = members.iter().position(|m| m.key == "mine").expect("mine");
            assert_eq!(doc.without_member(&members, i), original);
        }
    }

    #[test]
    fn an_element_put_first_comes_out_leaving_the_bytes() {
        for original in ["[]", "[1]", "[\n  {\"a\": [2]}, // kept\n  3,\n]"] {
            let doc = Doc::parse(original).expect("jsonc");
            let sep = if doc.elements(0).is_empty() { "" } else { "," };
            let edited = doc.inserted(1, &format!("\n  {{\"mine\": true}}{sep}"));
            let doc = Doc::parse(&edited).expect("still jsonc");
            assert_eq!(doc.value[0]["mine"], true, "{edited}");
            assert_eq!(doc.without_member(&doc.elements(0), 0), original);
        }
    }

    #[test]
    fn the_last_member_takes_the_comma_before_it() {
        let doc = Doc::parse("{\"a\": 1, \"b\": 2}").expect("json");
        let members = doc.members(0);
        assert_eq!(doc.without_member(&members, 1), "{\"a\": 1}");
    }

    #[test]
    fn broken_text_is_refused_with_a_reason() {
        for bad in [
            "{\"a\": 1",
            "{\"a\": }",
            "{ /* open",
            "{\"a\": \"x}",
            "[1, 2",
        ] {
            assert!(Doc::parse(bad).is_err(), "{bad}");
        }
        let e = Doc::parse("{\n\"a\": 1 /* oops").expect_err("unterminated");
        assert_eq!(e.to_string(), "unterminated comment starting at line 2");
    }
}

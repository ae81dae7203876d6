//! Tokenizer for 3D-ICE's stack (`.stk`) and floorplan files, as its flex
//! scanners split them: identifiers and keywords (`[A-Za-z_][A-Za-z0-9_-]*`,
//! so `non-uniform` is one word), numbers (kept as written, for exact unit
//! conversion), quoted paths, and the punctuation `: ; , ( ) .`. Comments
//! (`//`, `/* */`, `#`) and whitespace are skipped. A [`Cursor`] over the
//! tokens gives the parsers `expect`-style helpers with line numbers.

use crate::import::ImportError;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Word(String),
    /// A number literal as written (`1.30e-4`).
    Num(String),
    /// A double-quoted string, without the quotes.
    Str(String),
    Punct(char),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

pub fn tokenize(text: &str, file: &Path) -> Result<Vec<Token>, ImportError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let err = |line: usize, message: String| ImportError::Syntax {
        file: file.to_path_buf(),
        line,
        message,
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '#' || (c == '/' && next == Some('/')) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = line;
            i += 2;
            loop {
                match (chars.get(i), chars.get(i + 1)) {
                    (Some('*'), Some('/')) => break i += 2,
                    (Some(ch), _) => {
                        line += usize::from(*ch == '\n');
                        i += 1;
                    }
                    (None, _) => return Err(err(start, "unterminated /* comment".into())),
                }
            }
        } else if c == '"' {
            let start = line;
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    Some('"') => break i += 1,
                    Some('\n') | None => return Err(err(start, "unterminated \"string\"".into())),
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push(Token {
                tok: Tok::Str(s),
                line: start,
            });
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | '-'))
            {
                i += 1;
            }
            let w: String = chars[start..i].iter().collect();
            out.push(Token {
                tok: Tok::Word(w),
                line,
            });
        } else if c.is_ascii_digit()
            || ((c == '-' || c == '+' || c == '.')
                && next.is_some_and(|n| n.is_ascii_digit() || n == '.'))
        {
            let start = i;
            i += 1;
            while i < chars.len() {
                let ch = chars[i];
                let exp_sign = matches!(ch, '+' | '-') && matches!(chars[i - 1], 'e' | 'E');
                if ch.is_ascii_digit() || matches!(ch, '.' | 'e' | 'E') || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            let s: String = chars[start..i].iter().collect();
            if !s.parse::<f64>().is_ok_and(f64::is_finite) {
                return Err(err(line, format!("`{s}` is not a number")));
            }
            out.push(Token {
                tok: Tok::Num(s),
                line,
            });
        } else if ":;,().".contains(c) {
            out.push(Token {
                tok: Tok::Punct(c),
                line,
            });
            i += 1;
        } else {
            return Err(err(line, format!("unexpected character `{c}`")));
        }
    }
    Ok(out)
}

/// Tokens with a position, for recursive descent.
pub struct Cursor {
    pub file: PathBuf,
    toks: Vec<Token>,
    pos: usize,
}

impl Cursor {
    pub fn new(text: &str, file: &Path) -> Result<Cursor, ImportError> {
        Ok(Cursor {
            file: file.to_path_buf(),
            toks: tokenize(text, file)?,
            pos: 0,
        })
    }

    pub fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    /// The token `k` ahead.
    pub fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    /// The word `k` tokens ahead, if it is a word.
    pub fn peek_word(&self, k: usize) -> Option<&str> {
        match self.toks.get(self.pos + k).map(|t| &t.tok) {
            Some(Tok::Word(w)) => Some(w),
            _ => None,
        }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// Line of the current token (or of the last one at the end).
    pub fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |t| t.line)
    }

    pub fn error(&self, message: impl Into<String>) -> ImportError {
        ImportError::Syntax {
            file: self.file.clone(),
            line: self.line(),
            message: message.into(),
        }
    }

    /// The current token as a message shows it.
    pub fn found(&self) -> String {
        match self.peek() {
            None => "the end of the file".into(),
            Some(Tok::Word(w)) => format!("`{w}`"),
            Some(Tok::Num(n)) => format!("number `{n}`"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Punct(p)) => format!("`{p}`"),
        }
    }

    /// Consumes `words` (keywords, in order) or fails naming what was expected.
    pub fn keywords(&mut self, words: &str) -> Result<(), ImportError> {
        for w in words.split_whitespace() {
            if self.peek_word(0) != Some(w) {
                return Err(self.error(format!("expected `{words}`, found {}", self.found())));
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// Consumes the keyword `w` if it is next.
    pub fn eat_word(&mut self, w: &str) -> bool {
        let hit = self.peek_word(0) == Some(w);
        self.pos += usize::from(hit);
        hit
    }

    pub fn punct(&mut self, p: char) -> Result<(), ImportError> {
        if self.peek() != Some(&Tok::Punct(p)) {
            return Err(self.error(format!("expected `{p}`, found {}", self.found())));
        }
        self.pos += 1;
        Ok(())
    }

    pub fn eat_punct(&mut self, p: char) -> bool {
        let hit = self.peek() == Some(&Tok::Punct(p));
        self.pos += usize::from(hit);
        hit
    }

    /// An identifier (any word): (name, line).
    pub fn ident(&mut self, what: &str) -> Result<(String, usize), ImportError> {
        let line = self.line();
        match self.peek() {
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.pos += 1;
                Ok((w, line))
            }
            _ => Err(self.error(format!("expected {what}, found {}", self.found()))),
        }
    }

    /// A number literal as written.
    pub fn number(&mut self, what: &str) -> Result<String, ImportError> {
        match self.peek() {
            Some(Tok::Num(n)) => {
                let n = n.clone();
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.error(format!(
                "expected {what} (a number), found {}",
                self.found()
            ))),
        }
    }

    pub fn string(&mut self, what: &str) -> Result<String, ImportError> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error(format!(
                "expected {what} (a \"quoted\" path), found {}",
                self.found()
            ))),
        }
    }

    /// Skips to just after the next `;` (for statements carried as comments).
    pub fn skip_statement(&mut self) -> Result<Vec<String>, ImportError> {
        let mut words = Vec::new();
        loop {
            match self.peek().cloned() {
                None => return Err(self.error("expected `;` before the end of the file")),
                Some(Tok::Punct(';')) => {
                    self.pos += 1;
                    return Ok(words);
                }
                Some(t) => {
                    words.push(match t {
                        Tok::Word(w) | Tok::Num(w) => w,
                        Tok::Str(s) => format!("\"{s}\""),
                        Tok::Punct(p) => p.to_string(),
                    });
                    self.pos += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_lines() {
        let t = tokenize(
            "material SI : // c\n thermal conductivity 1.30e-4 ;\n/* a\nb */ non-uniform -5 \"x.flp\" T(a.b)",
            Path::new("s.stk"),
        )
        .unwrap();
        let toks: Vec<&Tok> = t.iter().map(|t| &t.tok).collect();
        assert_eq!(toks[0], &Tok::Word("material".into()));
        assert_eq!(toks[2], &Tok::Punct(':'));
        assert_eq!(toks[5], &Tok::Num("1.30e-4".into()));
        assert_eq!(t[5].line, 2);
        assert_eq!(toks[7], &Tok::Word("non-uniform".into()));
        assert_eq!(t[7].line, 4);
        assert_eq!(toks[8], &Tok::Num("-5".into()));
        assert_eq!(toks[9], &Tok::Str("x.flp".into()));
        assert_eq!(toks[13], &Tok::Punct('.'));
    }

    #[test]
    fn bad_input_names_the_line() {
        let e = tokenize("a ;\n @", Path::new("s.stk")).unwrap_err();
        assert!(
            e.to_string().contains("s.stk:2: unexpected character `@`"),
            "{e}"
        );
        let e = tokenize("\"abc\n", Path::new("s.stk")).unwrap_err();
        assert!(e.to_string().contains("s.stk:1: unterminated"), "{e}");
        let e = tokenize("1.2.3", Path::new("s.stk")).unwrap_err();
        assert!(e.to_string().contains("not a number"), "{e}");
    }
}

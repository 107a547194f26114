//! The lexer and recursive-descent parser of label selector strings, following client-go's
//! `labels.Parse` token by token so that the same inputs are accepted and rejected.

use super::{Operator, Requirement, SelectorError};
use crate::validation::validate_label_key;
use std::collections::BTreeSet;

/// Parses a selector string into its requirements, in input order.
pub(super) fn parse(input: &str) -> Result<Vec<Requirement>, SelectorError> {
    Parser::new(input).parse()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

#[derive(Debug, Clone, Copy)]
struct Item<'a> {
    token: Token,
    literal: &'a str,
    position: usize,
}

impl Item<'_> {
    /// How the item reads in an error message.
    fn describe(&self) -> String {
        if self.token == Token::End {
            "end of string".to_owned()
        } else {
            format!("'{}'", self.literal)
        }
    }
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits the input into tokens, always ending with [`Token::End`]. Special symbols are
/// ASCII, so every split falls on a character boundary.
fn lex(input: &str) -> Vec<Item<'_>> {
    let bytes = input.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    loop {
        while i < bytes.len() && is_whitespace(bytes[i]) {
            i += 1;
        }
        let start = i;
        if i == bytes.len() {
            items.push(Item {
                token: Token::End,
                literal: "",
                position: start,
            });
            return items;
        }
        let token = if is_special(bytes[i]) {
            // The longest operator wins: `!=` and `==` over `!` and `=`.
            let two = bytes.get(i..i + 2);
            if two == Some(b"!=") {
                i += 2;
                Token::NotEquals
            } else if two == Some(b"==") {
                i += 2;
                Token::DoubleEquals
            } else {
                i += 1;
                match bytes[start] {
                    b'=' => Token::Equals,
                    b'!' => Token::DoesNotExist,
                    b'(' => Token::OpenPar,
                    b')' => Token::ClosedPar,
                    b',' => Token::Comma,
                    b'>' => Token::GreaterThan,
                    _ => Token::LessThan,
                }
            }
        } else {
            while i < bytes.len() && !is_special(bytes[i]) && !is_whitespace(bytes[i]) {
                i += 1;
            }
            match &input[start..i] {
                "in" => Token::In,
                "notin" => Token::NotIn,
                _ => Token::Identifier,
            }
        };
        items.push(Item {
            token,
            literal: &input[start..i],
            position: start,
        });
    }
}

// ----- parser -----

/// Where the parser is: `in`/`notin` are operators only where an operator is expected, and
/// identifiers (keys or values) everywhere else.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser<'a> {
    items: Vec<Item<'a>>,
    next: usize,
}

type ParseResult<T> = Result<T, SelectorError>;

fn found(item: &Item<'_>, expected: &str) -> SelectorError {
    SelectorError::new(
        Some(item.position),
        format!("found {}, expected: {expected}", item.describe()),
    )
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Parser {
            items: lex(input),
            next: 0,
        }
    }

    fn item(&self, context: Context) -> Item<'a> {
        // `lex` always ends with `End`, and `consume` never moves past it.
        let mut item = self.items[self.next.min(self.items.len() - 1)];
        if context == Context::Values && matches!(item.token, Token::In | Token::NotIn) {
            item.token = Token::Identifier;
        }
        item
    }

    fn lookahead(&self, context: Context) -> Item<'a> {
        self.item(context)
    }

    fn consume(&mut self, context: Context) -> Item<'a> {
        let item = self.item(context);
        if self.next < self.items.len() - 1 {
            self.next += 1;
        }
        item
    }

    fn parse(mut self) -> ParseResult<Vec<Requirement>> {
        let mut requirements = Vec::new();
        loop {
            let item = self.lookahead(Context::Values);
            match item.token {
                Token::Identifier | Token::DoesNotExist => {
                    requirements.push(self.parse_requirement()?);
                    let after = self.consume(Context::Values);
                    match after.token {
                        Token::End => return Ok(requirements),
                        Token::Comma => {
                            let next = self.lookahead(Context::Values);
                            if !matches!(next.token, Token::Identifier | Token::DoesNotExist) {
                                return Err(found(&next, "identifier after ','"));
                            }
                        }
                        _ => return Err(found(&after, "',' or end of string")),
                    }
                }
                Token::End => return Ok(requirements),
                _ => return Err(found(&item, "'!', identifier, or end of string")),
            }
        }
    }

    fn parse_requirement(&mut self) -> ParseResult<Requirement> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        let at_key = |e: SelectorError| SelectorError::new(Some(key.position), e.message);
        if let Some(operator) = operator {
            return Requirement::new(key.literal, operator, Vec::<String>::new()).map_err(at_key);
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(key.literal, operator, values).map_err(at_key)
    }

    /// The key, and `exists`/`!` when no binary operator follows.
    fn parse_key_and_infer_operator(&mut self) -> ParseResult<(Item<'a>, Option<Operator>)> {
        let mut item = self.consume(Context::Values);
        let mut operator = None;
        if item.token == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            item = self.consume(Context::Values);
        }
        if item.token != Token::Identifier {
            return Err(found(&item, "identifier"));
        }
        if let Err(reason) = validate_label_key(item.literal) {
            return Err(SelectorError::new(
                Some(item.position),
                format!("invalid label key {:?}: {reason}", item.literal),
            ));
        }
        let next = self.lookahead(Context::Values).token;
        if operator.is_none() && matches!(next, Token::End | Token::Comma) {
            operator = Some(Operator::Exists);
        }
        Ok((item, operator))
    }

    fn parse_operator(&mut self) -> ParseResult<Operator> {
        let item = self.consume(Context::KeyAndOperator);
        Ok(match item.token {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => return Err(found(&item, "in, notin, =, ==, !=, >, <")),
        })
    }

    /// `( values )` of `in`/`notin`; `()` is the set holding `""`.
    fn parse_values(&mut self) -> ParseResult<BTreeSet<&'a str>> {
        let open = self.consume(Context::Values);
        if open.token != Token::OpenPar {
            return Err(found(&open, "'('"));
        }
        let next = self.lookahead(Context::Values);
        match next.token {
            Token::Identifier | Token::Comma => {
                let values = self.parse_identifiers_list()?;
                let close = self.consume(Context::Values);
                if close.token != Token::ClosedPar {
                    return Err(found(&close, "')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([""]))
            }
            _ => Err(found(&next, "',', ')' or identifier")),
        }
    }

    /// A comma-separated list of possibly empty values, up to (not including) `)`; Go's
    /// `parseIdentifiersList`, step for step.
    fn parse_identifiers_list(&mut self) -> ParseResult<BTreeSet<&'a str>> {
        let mut values = BTreeSet::new();
        loop {
            let item = self.consume(Context::Values);
            match item.token {
                Token::Identifier => {
                    values.insert(item.literal);
                    let next = self.lookahead(Context::Values);
                    match next.token {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(found(&next, "',' or ')'")),
                    }
                }
                Token::Comma => {
                    // `(,`, `,,` and `,)` each stand for an empty value. As in Go, the second
                    // comma of `,,` is consumed here, so what follows it must be a value or
                    // another comma: `(,,)` and `(a,,)` fail on `)`, `(,,a)` and `(,,,)` parse.
                    if values.is_empty() {
                        values.insert("");
                    }
                    match self.lookahead(Context::Values).token {
                        Token::ClosedPar => {
                            values.insert("");
                            return Ok(values);
                        }
                        Token::Comma => {
                            self.consume(Context::Values);
                            values.insert("");
                        }
                        _ => {}
                    }
                }
                _ => return Err(found(&item, "',', or identifier")),
            }
        }
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; nothing before `,` or the end means `""`.
    fn parse_exact_value(&mut self) -> ParseResult<BTreeSet<&'a str>> {
        if matches!(
            self.lookahead(Context::Values).token,
            Token::End | Token::Comma
        ) {
            return Ok(BTreeSet::from([""]));
        }
        let item = self.consume(Context::Values);
        if item.token == Token::Identifier {
            Ok(BTreeSet::from([item.literal]))
        } else {
            Err(found(&item, "identifier"))
        }
    }
}

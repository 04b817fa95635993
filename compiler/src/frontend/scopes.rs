//! Name bindings in scope: a stack with shadowing, looked up by name in
//! constant time. Scanning the stack instead made the front end quadratic
//! in a function's `let`s (50,000 of them: 2.1 s), since every name used —
//! and every combinator's name, which is looked up first — walked past
//! all of them.

use std::collections::HashMap;

pub struct Scopes<T> {
    items: Vec<(String, T)>,
    /// Each name's positions in `items`, innermost last.
    index: HashMap<String, Vec<usize>>,
}

impl<T> Default for Scopes<T> {
    fn default() -> Self {
        Scopes { items: vec![], index: HashMap::new() }
    }
}

impl<T> Scopes<T> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn push(&mut self, name: String, v: T) {
        self.index.entry(name.clone()).or_default().push(self.items.len());
        self.items.push((name, v));
    }

    /// Where the innermost binding of `name` at or above position `base` is.
    fn position(&self, name: &str, base: usize) -> Option<usize> {
        self.index.get(name).and_then(|at| at.last()).copied().filter(|&i| i >= base)
    }

    /// The innermost binding of `name` at or above position `base`.
    pub fn get(&self, name: &str, base: usize) -> Option<&T> {
        self.position(name, base).map(|i| &self.items[i].1)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut T> {
        self.position(name, 0).map(|i| &mut self.items[i].1)
    }

    /// Ends the bindings from position `mark` on, returning them in order.
    pub fn drain_from(&mut self, mark: usize) -> Vec<(String, T)> {
        let gone: Vec<(String, T)> = self.items.drain(mark.min(self.items.len())..).collect();
        for (name, _) in gone.iter().rev() {
            if let Some(at) = self.index.get_mut(name) {
                at.pop();
                if at.is_empty() {
                    self.index.remove(name);
                }
            }
        }
        gone
    }

    pub fn truncate(&mut self, mark: usize) {
        self.drain_from(mark);
    }

    /// The names bound at or above position `base`, outermost first.
    pub fn names_from(&self, base: usize) -> impl Iterator<Item = &str> {
        self.items[base.min(self.items.len())..].iter().map(|(n, _)| n.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Scopes;

    #[test]
    fn shadowing_and_ends() {
        let mut s = Scopes::default();
        s.push("x".to_string(), 1);
        s.push("y".to_string(), 2);
        let mark = s.len();
        s.push("x".to_string(), 3);
        assert_eq!(s.get("x", 0), Some(&3));
        assert_eq!(s.get("y", mark), None, "bound below the base");
        *s.get_mut("y").unwrap() = 5;
        let gone = s.drain_from(mark);
        assert_eq!(gone, vec![("x".to_string(), 3)]);
        assert_eq!(s.get("x", 0), Some(&1));
        assert_eq!(s.get("y", 0), Some(&5));
        assert_eq!(s.names_from(1).collect::<Vec<_>>(), vec!["y"]);
        s.truncate(0);
        assert_eq!(s.get("x", 0), None);
        assert!(s.is_empty());
    }
}

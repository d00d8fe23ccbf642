//! A bound, read from the parsed program, on what swc's TypeScript
//! transform would make of it.
//!
//! A program with an `enum` or a `namespace` is compiled by swc's full
//! transform and printed again, not stripped in place, and two things
//! there cost far more than the program: enum members whose strings swc
//! folds (`A1 = A0 + A0, A2 = A1 + A1, …`: each member doubles it, 447
//! bytes of program took the parent to 1.9 GiB), and the printer's
//! indentation, four spaces a level on every line (32 KiB of nested blocks
//! beside an `enum`: 3 GiB). [`check`] walks the parsed program once and
//! refuses one whose folded strings or indentation could pass a bound,
//! before swc is given it.
//!
//! The compiler runs in a sandbox held to the execution's memory cap and
//! wall clock, which is what bounds any program; this check is the courtesy
//! of saying what in the program would cost too much, at once, rather than
//! a memory limit reached after seconds of work.

use std::collections::HashSet;

use swc_ecma_ast::{
    ArrowExpr, BinaryOp, BlockStmt, Class, ClassMember, Expr, Lit, MemberExpr, MemberProp, Module,
    ObjectLit, PropOrSpread, Stmt, SwitchCase, SwitchStmt, TsEnumDecl, TsEnumMember,
    TsEnumMemberId, TsModuleBlock, TsModuleDecl, TsNamespaceDecl, VarDeclarator,
};
use swc_ecma_visit::{Visit, VisitWith};

/// The longest value an enum member may fold to: a megabyte, where real
/// enums hold names and short texts.
pub(crate) const MAX_ENUM_VALUE: u64 = 1 << 20;

/// The most indentation the printed program may carry: the sum, over its
/// statements, members and cases, of how deep each is, so 4 MiB of spaces.
pub(crate) const MAX_INDENT_LEVELS: u64 = 1 << 20;

/// The most the folded values may come to, written out wherever swc puts
/// them (each enum member's where it is declared, and again at every
/// `E.A` it inlines): what a frame carries to the child, 16 MiB. One value
/// just under [`MAX_ENUM_VALUE`], named 2,000 times, took 1.7 GB.
pub(crate) const MAX_FOLDED_TOTAL: u64 = 16 << 20;

/// The most operators one foldable value (an enum member's, a variable's)
/// may join: swc's folding copies the expression at every level of it
/// (`x + x + …`, 3,000 terms: 862 MB).
pub(crate) const MAX_FOLDED_OPERATORS: u64 = 512;

/// Why `module` is not to be transformed, if it is not.
pub(crate) fn check(module: &Module) -> Result<(), String> {
    let mut cost = Cost::default();
    module.visit_with(&mut cost);
    if cost.largest > MAX_ENUM_VALUE {
        return Err(format!(
            "an enum member's value could be {} bytes once its strings are joined; at most {MAX_ENUM_VALUE} are compiled",
            cost.largest
        ));
    }
    if cost.total > MAX_FOLDED_TOTAL {
        return Err(format!(
            "its enum members' values, written out where they are declared and where they are \
             named, could come to {} bytes; at most {MAX_FOLDED_TOTAL} are compiled",
            cost.total
        ));
    }
    if cost.operators > MAX_FOLDED_OPERATORS {
        return Err(format!(
            "a value it would fold (an enum member's or a variable's) joins {} operators; at most \
             {MAX_FOLDED_OPERATORS} are compiled",
            cost.operators
        ));
    }
    if cost.indent > MAX_INDENT_LEVELS {
        return Err(format!(
            "compiled (it has an enum or a namespace), it would be printed with {} levels of \
             indentation over its lines (nesting too deep for its length); at most \
             {MAX_INDENT_LEVELS} are compiled",
            cost.indent
        ));
    }
    Ok(())
}

#[derive(Default)]
struct Cost {
    /// How deep the walk is, in the printer's levels of indentation.
    depth: u64,
    /// The sum of the depths of what the printer puts on a line of its own.
    indent: u64,
    /// The longest value any enum member or variable could fold to so far.
    largest: u64,
    /// The most binary operators in one such value.
    operators: u64,
    /// The folded values written out, as far as they could come to.
    total: u64,
    /// The names of the enum members so far, to know `E.A` for one.
    members: HashSet<String>,
}

impl Cost {
    /// One line of output at the current depth.
    fn line(&mut self) {
        self.indent = self.indent.saturating_add(self.depth);
    }

    /// Takes in a value swc may fold: its length, and its operators.
    fn folded(&mut self, expr: &Expr) {
        let value = self.value(expr);
        self.largest = self.largest.max(value);
        self.total = self.total.saturating_add(value);
        self.operators = self.operators.max(operators(expr));
    }

    /// Walks `node` one level deeper.
    fn nested(&mut self, node: &impl VisitWith<Self>) {
        self.depth += 1;
        node.visit_children_with(self);
        self.depth -= 1;
    }

    /// How long `expr` could be as a folded enum value: a string its
    /// length (in the printer's worst escapes, six bytes a character), a
    /// name any member's longest (it may name a member of any enum), a
    /// `+` both sides, a template all its parts; anything else a number.
    fn value(&self, expr: &Expr) -> u64 {
        const NUMBER: u64 = 24;
        match expr {
            Expr::Lit(Lit::Str(s)) => (s.value.len() as u64).saturating_mul(6),
            Expr::Lit(_) => NUMBER,
            Expr::Ident(_) | Expr::Member(_) => self.largest.max(NUMBER),
            Expr::Paren(paren) => self.value(&paren.expr),
            // What only types or checks a value is the value.
            Expr::TsAs(e) => self.value(&e.expr),
            Expr::TsSatisfies(e) => self.value(&e.expr),
            Expr::TsNonNull(e) => self.value(&e.expr),
            Expr::TsTypeAssertion(e) => self.value(&e.expr),
            Expr::TsConstAssertion(e) => self.value(&e.expr),
            Expr::TsInstantiation(e) => self.value(&e.expr),
            Expr::Seq(seq) => seq.exprs.last().map_or(NUMBER, |e| self.value(e)),
            Expr::Bin(bin) if bin.op == BinaryOp::Add => {
                self.value(&bin.left).saturating_add(self.value(&bin.right))
            }
            Expr::Tpl(tpl) => {
                let quasis: u64 = tpl
                    .quasis
                    .iter()
                    .map(|q| (q.raw.len() as u64).saturating_mul(6))
                    .sum();
                tpl.exprs
                    .iter()
                    .map(|e| self.value(e))
                    .fold(quasis, u64::saturating_add)
            }
            Expr::Cond(cond) => self.value(&cond.cons).max(self.value(&cond.alt)),
            // Numbers, whatever they are made of.
            Expr::Bin(_) | Expr::Unary(_) | Expr::Update(_) => NUMBER,
            // Anything else may name a value (`E?.A`, `E["A"]`).
            _ => self.largest.max(NUMBER),
        }
    }
}

/// The binary operators in `expr`, counted without recursion (a chain of
/// thousands is as deep).
fn operators(expr: &Expr) -> u64 {
    let mut count = 0u64;
    let mut pending = vec![expr];
    while let Some(expr) = pending.pop() {
        match expr {
            Expr::Bin(bin) => {
                count += 1;
                pending.push(&bin.left);
                pending.push(&bin.right);
            }
            Expr::Paren(e) => pending.push(&e.expr),
            Expr::TsAs(e) => pending.push(&e.expr),
            Expr::TsSatisfies(e) => pending.push(&e.expr),
            Expr::TsNonNull(e) => pending.push(&e.expr),
            Expr::TsTypeAssertion(e) => pending.push(&e.expr),
            Expr::Tpl(tpl) => pending.extend(tpl.exprs.iter().map(|e| &**e)),
            Expr::Unary(e) => pending.push(&e.arg),
            Expr::Cond(e) => pending.extend([&*e.test, &*e.cons, &*e.alt]),
            _ => {}
        }
    }
    count
}

impl Visit for Cost {
    fn visit_stmt(&mut self, node: &Stmt) {
        // A statement's own statements (a body without braces, a block)
        // are a level deeper.
        self.line();
        self.nested(node);
    }

    // Counted as a line: its body may be printed as a block of its own.
    fn visit_arrow_expr(&mut self, node: &ArrowExpr) {
        self.line();
        self.nested(node);
    }

    fn visit_var_declarator(&mut self, node: &VarDeclarator) {
        if let Some(init) = &node.init {
            self.folded(init);
        }
        node.visit_children_with(self);
    }

    fn visit_prop_or_spread(&mut self, node: &PropOrSpread) {
        self.line();
        node.visit_children_with(self);
    }

    fn visit_class_member(&mut self, node: &ClassMember) {
        self.line();
        node.visit_children_with(self);
    }

    fn visit_switch_case(&mut self, node: &SwitchCase) {
        self.line();
        self.nested(node);
    }

    fn visit_ts_enum_member(&mut self, node: &TsEnumMember) {
        self.line();
        if let Some(init) = &node.init {
            self.folded(init);
        }
        let name = match &node.id {
            TsEnumMemberId::Ident(id) => id.sym.to_string(),
            TsEnumMemberId::Str(s) => s.value.to_string_lossy().into_owned(),
        };
        self.members.insert(name);
        node.visit_children_with(self);
    }

    // `E.A` or `E["A"]` of an enum member: swc may write its value there.
    fn visit_member_expr(&mut self, node: &MemberExpr) {
        let named = match &node.prop {
            MemberProp::Ident(name) => self.members.contains(name.sym.as_str()),
            MemberProp::Computed(computed) => match &*computed.expr {
                Expr::Lit(Lit::Str(s)) => self.members.contains(&*s.value.to_string_lossy()),
                _ => false,
            },
            MemberProp::PrivateName(_) => false,
        };
        if named {
            self.total = self.total.saturating_add(self.largest);
        }
        node.visit_children_with(self);
    }

    fn visit_block_stmt(&mut self, node: &BlockStmt) {
        self.nested(node);
    }

    fn visit_ts_module_block(&mut self, node: &TsModuleBlock) {
        self.nested(node);
    }

    fn visit_ts_module_decl(&mut self, node: &TsModuleDecl) {
        self.nested(node);
    }

    // `namespace a.b.c`: each name a namespace of its own.
    fn visit_ts_namespace_decl(&mut self, node: &TsNamespaceDecl) {
        self.line();
        self.nested(node);
    }

    fn visit_object_lit(&mut self, node: &ObjectLit) {
        self.nested(node);
    }

    fn visit_class(&mut self, node: &Class) {
        self.nested(node);
    }

    fn visit_switch_stmt(&mut self, node: &SwitchStmt) {
        self.nested(node);
    }

    fn visit_ts_enum_decl(&mut self, node: &TsEnumDecl) {
        self.nested(node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::body;
    use swc_ecma_parser::{Syntax, TsSyntax};

    /// `check` of `program`, parsed and walked on a stack as deep as the
    /// parser threads' (the nesting here is thousands of levels).
    fn cost_of(program: &str) -> Result<(), String> {
        let program = program.to_owned();
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || {
                let mut parser = body::parser(Syntax::Typescript(TsSyntax::default()), &program);
                check(&parser.parse_module().unwrap())
            })
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn enum_values_that_double_are_refused_before_they_are_folded() {
        let doubling = |n: usize| {
            let members: Vec<String> = std::iter::once("A0 = \"ab\"".to_owned())
                .chain((1..n).map(|i| format!("A{i} = A{} + A{}", i - 1, i - 1)))
                .collect();
            format!("enum E {{ {} }}", members.join(", "))
        };
        // "ab" doubled 10 times: 2 KiB, at six bytes a character 12 KiB.
        cost_of(&doubling(11)).unwrap();
        let refused = cost_of(&doubling(27)).unwrap_err();
        assert!(
            refused.contains("an enum member's value could be"),
            "{refused}"
        );
        // Through a template, another enum's member, parentheses.
        let across = "enum A { X = \"abcd\" }\nenum B { Y = `${A.X}${A.X}`, Z = (Y + Y) }";
        cost_of(across).unwrap();
        let mut program = String::from("enum E0 { X = \"ab\" }\n");
        for i in 1..40 {
            program.push_str(&format!(
                "enum E{i} {{ X = E{}.X + E{}.X }}\n",
                i - 1,
                i - 1
            ));
        }
        assert!(cost_of(&program).is_err());
        // Through what only types a value, and through variables swc folds.
        let wrapped: Vec<String> = std::iter::once("A0 = \"ab\"".to_owned())
            .chain((1..27).map(|i| format!("A{i} = (A{} as string)! + <string>A{}", i - 1, i - 1)))
            .collect();
        assert!(cost_of(&format!("enum E {{ {} }}", wrapped.join(", "))).is_err());
        let mut consts = String::from("enum E { A }\nconst C0 = \"ab\";\n");
        for i in 1..30 {
            consts.push_str(&format!("const C{i} = C{} + C{};\n", i - 1, i - 1));
        }
        assert!(cost_of(&consts).is_err());
        // A long chain of operators, folded at every level.
        let chain = format!("enum E {{ A = {} }}", vec!["1"; 3000].join(" + "));
        let refused = cost_of(&chain).unwrap_err();
        assert!(refused.contains("joins 2999 operators"), "{refused}");
        // One large value named many times, or given to many members.
        let big = format!("\"{}\"", "x".repeat(100_000));
        let named = format!("enum E {{ A = {big} }}\n{}", "E.A;\n".repeat(40));
        let refused = cost_of(&named).unwrap_err();
        assert!(
            refused.contains("written out where they are declared"),
            "{refused}"
        );
        let given = format!(
            "enum E {{ A = {big}, {} }}",
            (0..40)
                .map(|i| format!("B{i} = E[\"A\"]"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(cost_of(&given).is_err());
        cost_of(&format!("enum E {{ A = {big} }}\nE.A;")).unwrap();
        // Numbers do not grow.
        let flags: Vec<String> = (0..2000)
            .map(|i| format!("F{i} = 1 << {}", i % 31))
            .collect();
        cost_of(&format!("enum Flags {{ {} }}", flags.join(", "))).unwrap();
    }

    #[test]
    fn indentation_past_the_bound_is_refused_and_ordinary_nesting_is_not() {
        let blocks = |n: usize| format!("enum E {{ A }}\n{}{}", "{".repeat(n), "}".repeat(n));
        cost_of(&blocks(1_000)).unwrap();
        let refused = cost_of(&blocks(4_000)).unwrap_err();
        assert!(refused.contains("levels of indentation"), "{refused}");
        let namespaces =
            |n: usize| format!("{}let x = 1;{}", "namespace A { ".repeat(n), "}".repeat(n));
        assert!(cost_of(&namespaces(3_000)).is_err());
        // Nesting without braces: dotted namespaces, bodies of `if`,
        // arrows' bodies.
        let dotted = format!("namespace {} {{ }}", vec!["a"; 2_000].join("."));
        assert!(cost_of(&dotted).is_err());
        let ifs = format!("enum E {{ A }}\n{}x;", "if (a) ".repeat(2_000));
        assert!(cost_of(&ifs).is_err());
        let arrows = format!("enum E {{ A }}\nconst f = {}1;", "() => ".repeat(2_000));
        assert!(cost_of(&arrows).is_err());
        // Many statements at a moderate depth: the sum is what counts.
        let wide = format!(
            "enum E {{ A }}\n{}{}{}",
            "{".repeat(40),
            "x;".repeat(30_000),
            "}".repeat(40)
        );
        assert!(cost_of(&wide).is_err());
        let ordinary = format!(
            "enum E {{ A }}\nfunction f() {{ {} }}",
            "if (x) { y(); }\n".repeat(2_000)
        );
        cost_of(&ordinary).unwrap();
    }
}

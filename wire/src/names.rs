//! The name a caller most likely meant, for the error that says a name is
//! unknown: a tool called `getUser` where the parent has `get_user`.

/// Names longer than this are never compared: a name a program makes up
/// can be any length, and the comparison is quadratic in it.
const MAX_COMPARED: usize = 64;

/// Of `names`, the one `name` most likely misspells: the same once case,
/// `_` and `-` are set aside (`getUser`, `get-user`, `GET_USER` for
/// `get_user`), else one within an edit or two of it (one for a name of
/// eight characters or more, two for twelve or more: a shorter name an
/// edit away is as likely another word, `data` for `date`). The first of
/// equals.
pub fn nearest<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if name.chars().count() > MAX_COMPARED {
        return None;
    }
    let wanted = folded(name);
    let allowed = match wanted.len() {
        0..=7 => 0,
        8..=11 => 1,
        _ => 2,
    };
    let mut best: Option<(usize, &str)> = None;
    for candidate in names {
        if candidate == name || candidate.chars().count() > MAX_COMPARED {
            continue;
        }
        let distance = edits(&wanted, &folded(candidate));
        if distance <= allowed && best.is_none_or(|(least, _)| distance < least) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// `name` in lower case, without `_` and `-`.
fn folded(name: &str) -> Vec<char> {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The Levenshtein distance between `a` and `b`.
fn edits(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_separators_are_set_aside() {
        let names = ["get_user", "list_users", "search"];
        assert_eq!(nearest("getUser", names), Some("get_user"));
        assert_eq!(nearest("GET-USER", names), Some("get_user"));
        assert_eq!(nearest("listUsers", names), Some("list_users"));
    }

    #[test]
    fn a_near_misspelling_is_found_and_a_far_one_is_not() {
        let names = ["get_user", "list_users", "search"];
        assert_eq!(nearest("get_users", names), Some("get_user"));
        assert_eq!(nearest("serch", names), None);
        assert_eq!(nearest("data", ["date"]), None);
        assert_eq!(nearest("results", ["result"]), None);
        assert_eq!(nearest("search_doc", ["search_docs"]), Some("search_docs"));
        assert_eq!(nearest("lst_users", names), Some("list_users"));
        assert_eq!(nearest("lst_usrs", names), None);
        assert_eq!(nearest("fetch", names), None);
        assert_eq!(nearest("x", ["y"]), None);
        // The name itself is no suggestion.
        assert_eq!(nearest("search", names), None);
    }

    #[test]
    fn the_closest_wins_and_long_names_are_not_compared() {
        assert_eq!(
            nearest("get_usera", ["get_users", "get_user"]),
            Some("get_users")
        );
        let long = "a".repeat(MAX_COMPARED + 1);
        assert_eq!(nearest(&long, [long.as_str()]), None);
        assert_eq!(nearest("aaaa", [long.as_str()]), None);
    }
}

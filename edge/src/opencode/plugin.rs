//! The plugin file OpenCode loads from `plugins/`: `solaria.js` with the path of
//! the solaria executable written in.

/// File name of the plugin inside the plugins directory.
pub const PLUGIN_FILE_NAME: &str = "solaria.js";

/// The plugin's source; `"__SOLARIA_EXE__"` stands for the executable.
const SOURCE: &str = include_str!("solaria.js");
const PLACEHOLDER: &str = "\"__SOLARIA_EXE__\"";

/// The plugin for `exe`: plain ES module JavaScript, no dependencies.
pub fn plugin_file(exe: &str) -> String {
    // A JSON string is a JavaScript string literal: the path needs no other escaping.
    let literal = serde_json::Value::from(exe).to_string();
    SOURCE.replacen(PLACEHOLDER, &literal, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_is_written_in_as_a_string() {
        let text = plugin_file("/opt/my \"tools\"/solaria");
        assert!(text.contains(r#"const SOLARIA = "/opt/my \"tools\"/solaria";"#));
        assert!(!text.contains("__SOLARIA_EXE__"));
        assert!(text.contains(super::super::PLUGIN_MARKER));
    }
}

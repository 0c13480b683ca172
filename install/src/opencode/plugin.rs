//! The plugin file OpenCode loads from `plugins/`: `solaria.js` with the hook
//! command written in (`solaria hook`, or `solaria-hook` when it sits beside it).

/// File name of the plugin inside the plugins directory.
pub const PLUGIN_FILE_NAME: &str = "solaria.js";

/// The plugin's source; its `HOOK` array stands for the hook command's words.
const SOURCE: &str = include_str!("solaria.js");
const PLACEHOLDER: &str = "[\"__SOLARIA_EXE__\", \"hook\"]";

/// The plugin running `program`: plain ES module JavaScript, no dependencies.
pub fn plugin_file(program: &HookProgram) -> String {
    // A JSON array of strings is a JavaScript array literal: no other escaping.
    let literal = serde_json::Value::from(program.command()).to_string();
    SOURCE.replacen(PLACEHOLDER, &literal, 1)
}

use solaria_hook::program::HookProgram;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_command_is_written_in_as_strings() {
        let text = plugin_file(&HookProgram::Solaria("/opt/my \"tools\"/solaria".into()));
        assert!(text.contains(r#"const HOOK = ["/opt/my \"tools\"/solaria","hook"];"#));
        assert!(!text.contains("__SOLARIA_EXE__"));
        assert!(text.contains(super::super::PLUGIN_MARKER));
        let relayed = plugin_file(&HookProgram::Relay {
            client: "/bin/solaria-hook".into(),
            data_dir: "/data".into(),
        });
        assert!(relayed.contains(r#"const HOOK = ["/bin/solaria-hook","--data-dir","/data"];"#));
    }
}

"""The app's Gradio side: each tab's handlers, which only convert formats (recover_core does the work)."""

//! The model-file reader (numasim JSON and XGBoost JSON) on arbitrary
//! bytes; a model that loads must predict without panicking.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numasim_fuzz::model(data);
});
